#!/usr/bin/env bash
# The author's loop, kit by kit, as a new user meets it (TestAuthorLoop in
# cmd/mcphost/internal/systest/kits): `mcphost new NAME --lang KIT` in a temporary directory
# outside the repository; `mcphost serve` with the watcher under
# `env -i PATH=/usr/bin:/bin` plus the kit's toolchain directory; the
# official Go SDK client connected; edit what the tool returns and save,
# until the new output comes; rename the tool and save, until list_changed.
# Prints, per kit, save → new output and save → list_changed, each with the
# build's share, and the first start (new → tool listed).
#
#   scripts/authorloop.sh [KIT...]   # default: every kit `mcphost new --help` lists
#   RUNS=5 scripts/authorloop.sh c   # five loops of a kit
#
# A kit whose toolchain is missing is skipped with a message, or fails
# under CI=true. The toolchains come from scripts/kits.sh (run here when
# MCPHOST_AS_TOOLCHAIN is not set yet).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -gt 0 ]; then
	kits=("$@")
else
	# usage: mcphost new NAME [--lang go|c|assemblyscript|…] [--dir D]
	read -r -a kits <<<"$(go run ./cmd/mcphost new --help 2>&1 | sed -n 's/^usage: mcphost new NAME \[--lang \([^] ]*\)\].*/\1/p' | tr '|' ' ')"
	[ ${#kits[@]} -gt 0 ] || { echo "authorloop: no kits found in 'mcphost new --help'" >&2; exit 1; }
fi
[ -n "${MCPHOST_AS_TOOLCHAIN:-}" ] || eval "$(bash scripts/kits.sh --env)"

# missing KIT: why the kit's toolchain is not there ("" when it is).
missing() {
	case $1 in
	go) command -v go >/dev/null || echo "go is not installed" ;;
	c) command -v clang >/dev/null && [ -e /usr/lib/wasm32-wasi/crt1-reactor.o ] ||
		echo "clang or wasi-libc is not installed (scripts/kit-deps.sh)" ;;
	assemblyscript | ts) command -v node >/dev/null && command -v npm >/dev/null || echo "node and npm are not installed" ;;
	esac
}
# toolchain KIT: the directories the kit's build needs on PATH beyond /usr/bin:/bin.
toolchain() {
	case $1 in
	go) dirname "$(command -v go)" ;;
	assemblyscript | ts) dirname "$(command -v node)" ;;
	esac
}

results=() status=0
for kit in "${kits[@]}"; do
	why=$(missing "$kit")
	if [ -n "$why" ]; then
		if [ "${CI:-}" = true ]; then
			echo "authorloop $kit: FAIL: $why (CI=true: scripts/kits.sh should have installed it)" >&2
			status=1
		else
			echo "authorloop $kit: skipped: $why; run scripts/kits.sh to install the kit toolchains" >&2
		fi
		continue
	fi
	path=/usr/bin:/bin
	for d in $(toolchain "$kit"); do
		case ":$path:" in *":$d:"*) ;; *) path=$path:$d ;; esac
	done
	echo "== $kit (serve PATH=$path)" >&2
	out=$(MCPHOST_AUTHORLOOP_KIT=$kit MCPHOST_AUTHORLOOP_PATH=$path \
		go test -count="${RUNS:-1}" -run '^TestAuthorLoop$' -v -timeout 30m ./cmd/mcphost/internal/systest/kits 2>&1) || {
		echo "$out" >&2
		echo "authorloop $kit: FAIL" >&2
		status=1
		continue
	}
	while IFS= read -r line; do results+=("$line"); done < <(grep '^authorloop ' <<<"$out")
done
printf '%s\n' "${results[@]}"
exit $status
