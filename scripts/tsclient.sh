#!/usr/bin/env bash
# Installs the official MCP TypeScript SDK (pinned in scripts/tsclient/
# package.json) into .kits/tsclient, beside the client that TestTSClient in
# cmd/mcphost drives against a real `mcphost serve`.
#
#   eval "$(scripts/tsclient.sh --env)"   # install, then export MCPHOST_TS_CLIENT
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${KITS_DIR:-$PWD/.kits}/tsclient
{
	mkdir -p "$dir"
	cp scripts/tsclient/package.json scripts/tsclient/client.mjs "$dir/"
	[ -d "$dir/node_modules/@modelcontextprotocol/sdk" ] ||
		(cd "$dir" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
} >&2
printf 'export MCPHOST_TS_CLIENT=%q\n' "$dir/client.mjs"
