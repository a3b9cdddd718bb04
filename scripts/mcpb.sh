#!/usr/bin/env bash
# Builds an MCP bundle (.mcpb) around one mcphost binary: manifest.json from
# cmd/mcphost/packaging/mcpb/manifest.json.in, validated and packed by the official
# @anthropic-ai/mcpb CLI (from npm, pinned, into .kits/mcpb).
#
#   scripts/mcpb.sh BINARY VERSION GOOS OUT.mcpb
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
MCPB_PKG=@anthropic-ai/mcpb@2.1.2
bin=$1 version=${2#v} goos=$3 outfile=$4
case $goos in windows) platform=win32 ;; *) platform=$goos ;; esac
# The manifest wants semver: strip a leading v; a bare commit becomes 0.0.0-<commit>.
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] || version=0.0.0-${version//[^0-9A-Za-z.-]/-}

tools=${KITS_DIR:-$repo/.kits}/mcpb
if [ ! -x "$tools/node_modules/.bin/mcpb" ]; then
	mkdir -p "$tools"
	[ -f "$tools/package.json" ] || echo '{"name":"mcphost-mcpb","private":true}' >"$tools/package.json"
	(cd "$tools" && npm install --no-audit --no-fund --loglevel=error "$MCPB_PKG" >/dev/null)
fi
mcpb=$tools/node_modules/.bin/mcpb

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/server"
exe=$(basename "$bin")
cp "$bin" "$stage/server/$exe"
cp LICENSE README.md "$stage/"
sed -e "s/@VERSION@/$version/" -e "s/@PLATFORM@/$platform/" -e "s/@EXE@/$exe/g" cmd/mcphost/packaging/mcpb/manifest.json.in >"$stage/manifest.json"
"$mcpb" validate "$stage/manifest.json"
"$mcpb" pack "$stage" "$outfile" >/dev/null
echo "bundle $outfile"
