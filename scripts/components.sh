#!/usr/bin/env bash
# Builds the WebAssembly components the component tests use, from the
# sources in sandbox/internal/component/testdata, offline: C through Debian's clang
# and wasi-libc (scripts/kit-deps.sh), then `jco embed` and
# `jco new --wasi-reactor`, and JavaScript through componentize-js; npm packages at pinned versions into
# .kits/components (reused between runs). Built components go to
# .kits/components/out, named by the SHA-256 of their sources, so an
# unchanged source is never rebuilt.
#
#   scripts/components.sh          # build, then run the component tests
#   eval "$(scripts/components.sh --env)"   # build, then export MCPHOST_COMPONENTS
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
dir=${KITS_DIR:-$repo/.kits}/components
src=$repo/sandbox/internal/component/testdata
PKGS=(@bytecodealliance/jco@1.35.0 @bytecodealliance/componentize-js@0.23.0 @bytecodealliance/preview2-shim@0.26.1)

{
	bash scripts/kit-deps.sh
	command -v node >/dev/null || { echo "components: node is required (apt-get install nodejs)"; exit 1; }
	mkdir -p "$dir/out"
	[ -f "$dir/package.json" ] || echo '{"name":"mcphost-components","private":true}' >"$dir/package.json"
	[ -d "$dir/node_modules/@bytecodealliance/jco" ] ||
		(cd "$dir" && npm install --no-audit --no-fund --loglevel=error "${PKGS[@]}" >/dev/null)
	# preview2-shim's Node filesystem starts with no preopens, so jco cannot
	# read the WIT file; the launcher gives it "/" first.
	cp "$src/launch.mjs" "$dir/launch.mjs"
	jco() { node "$dir/launch.mjs" "$dir/node_modules/@bytecodealliance/jco/dist/jco.js" "$@"; }

	for c in "$src"/c/*.c; do
		name=$(basename "$c" .c)
		case $name in *-extism) continue ;; esac
		# The WIT we write for interfaces jco has none of (testdata/wit:
		# wasi:config, wasi:logging) counts for the worlds that import them.
		deps=()
		for d in "$src"/wit/*/; do
			iface=$(basename "$d")
			grep -q "import ${iface/-/:}/" "$src/c/$name.wit" && deps+=("$d")
		done
		witdeps=()
		[ "${#deps[@]}" -gt 0 ] && mapfile -t witdeps < <(find "${deps[@]}" -name '*.wit' | sort)
		sum=$(cat "$c" "$src/c/$name.wit" "${witdeps[@]}" | sha256sum | cut -c1-16)
		out="$dir/out/$name-$sum.wasm"
		if [ ! -f "$out" ]; then
			tmp=$(mktemp -d)
			clang --target=wasm32-wasi -mexec-model=reactor -Os -Wl,--strip-all -o "$tmp/core.wasm" "$c"
			# A world that imports WASI interfaces finds their WIT in
			# jco's own copy (never committed here).
			mkdir "$tmp/wit"
			cp "$src/c/$name.wit" "$tmp/wit/"
			grep -q 'import wasi:' "$src/c/$name.wit" &&
				cp -r "$dir/node_modules/@bytecodealliance/jco/lib/wit/builtin/0.2.12" "$tmp/wit/deps"
			for d in "${deps[@]}"; do
				mkdir -p "$tmp/wit/deps"
				cp -r "$d" "$tmp/wit/deps/"
			done
			jco embed "$tmp/core.wasm" --wit "$tmp/wit" -n "$name" -o "$tmp/embed.wasm"
			jco new "$tmp/embed.wasm" --wasi-reactor -o "$out.tmp"
			mv "$out.tmp" "$out"
			rm -rf "$tmp"
		fi
		ln -sf "$(basename "$out")" "$dir/out/$name.wasm"
	done

	# Components written by hand in the text format (hostile ones).
	for w in "$src"/wat/*.wat; do
		jco parse "$w" -o "$dir/out/$(basename "$w" .wat).wasm"
	done

	# The reference host for TestComponentDifferential: kinds and net
	# transpiled to JavaScript, run by Node with preview2-shim.
	for name in kinds net; do
		if [ ! -f "$dir/out/$name-js/.sum" ] || [ "$(cat "$dir/out/$name-js/.sum")" != "$(readlink "$dir/out/$name.wasm")" ]; then
			rm -rf "$dir/out/$name-js"
			jco transpile "$dir/out/$name.wasm" -o "$dir/out/$name-js" >/dev/null
			echo '{"type":"module"}' >"$dir/out/$name-js/package.json"
			readlink "$dir/out/$name.wasm" >"$dir/out/$name-js/.sum"
		fi
	done

	# Extism peers of the components, for BenchmarkComponentVsExtismC.
	for c in "$src"/c/*-extism.c; do
		name=$(basename "$c" .c)
		clang --target=wasm32-wasi -mexec-model=reactor -O2 -I "$repo/sdk-guest/c/template" \
			-o "$dir/out/$name.wasm" "$c"
	done

	# JavaScript: componentize-js takes 1-3 minutes and makes about 12 MB,
	# so the result is kept by the hash of its sources (CI caches
	# .kits/components between runs).
	for j in "$src"/js/*.js; do
		name=$(basename "$j" .js)
		sum=$(cat "$j" "$src/js/$name.wit" | sha256sum | cut -c1-16)
		out="$dir/out/$name-$sum.wasm"
		if [ ! -f "$out" ]; then
			echo "components: building $name.js with componentize-js (1-3 minutes)"
			(cd "$dir" && node "$dir/launch.mjs" "$dir/node_modules/@bytecodealliance/componentize-js/src/cli.js" \
				"$j" --wit "$src/js/$name.wit" -n "$name" -o "$out.tmp")
			mv "$out.tmp" "$out"
		fi
		ln -sf "$(basename "$out")" "$dir/out/$name.wasm"
	done
} >&2
if [ "${1:-}" = "--env" ]; then
	printf 'export MCPHOST_COMPONENTS=%q\n' "$dir/out"
	exit 0
fi
export MCPHOST_COMPONENTS="$dir/out"
go test -count=1 -run 'Component' -v ./sandbox/... ./plugins/... 2>&1 | grep -E '^(=== RUN|--- |\s+\w+_test|PASS|FAIL|ok)'
test "${PIPESTATUS[0]}" -eq 0
