#!/usr/bin/env bash
# Builds Jaeger v1.76.0 (the "v2" all-in-one: OTLP in, query API out),
# pinned as a tool in internal/tools/go.mod, into a cache directory, and
# prints the binary's path. The trace test of cmd/mcphost (TestJaegerTrace)
# runs it when MCPHOST_JAEGER names it:
#
#	MCPHOST_JAEGER=$(bash scripts/jaeger.sh) go test -run TestJaegerTrace ./cmd/mcphost/internal/systest/clients
#
# A cold build takes about 12 minutes on 2 cores (a 121 MB binary);
# scripts/test.sh (the README's test command) runs it once, and a second
# run prints the cached path at once.
set -euo pipefail
cd "$(dirname "$0")/../internal/tools"
version=$(go list -m -f '{{.Version}}' github.com/jaegertracing/jaeger)
dir="${MCPHOST_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mcphost/tools}/jaeger-$version"
bin="$dir/jaeger"
if [ ! -x "$bin" ]; then
	mkdir -p "$dir"
	echo "building jaeger $version into $dir (about 12 minutes cold)" >&2
	go build -o "$bin.tmp" github.com/jaegertracing/jaeger/cmd/jaeger
	mv "$bin.tmp" "$bin"
fi
echo "$bin"
