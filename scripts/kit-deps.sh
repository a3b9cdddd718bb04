#!/usr/bin/env bash
# Installs what sdk-guest/c builds with, from Debian (bookworm: clang 14):
# clang, lld (wasm-ld), wasi-libc and compiler-rt's wasm32 builtins, which
# clang links into every wasm32 program. The AssemblyScript kit needs only
# Node and npm; scripts/kits.sh installs its npm packages.
set -euo pipefail
pkgs=(clang lld wasi-libc libclang-rt-14-dev-wasm32)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
clang --version | sed -n 1p # sed reads to the end: no SIGPIPE under pipefail
