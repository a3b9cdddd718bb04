#!/usr/bin/env bash
# Installs the official MCP TypeScript SDK clients (pinned in
# internal/tools/ts/package.json) into internal/tools/ts/node_modules
# (git-ignored), for the tests that drive mcphost with them: TestTSClient in
# cmd/mcphost/internal/systest/clients (stdio and Streamable HTTP, with the 1.x client
# @modelcontextprotocol/sdk, which speaks up to 2025-11-25, and the 2.x
# client @modelcontextprotocol/client, which negotiates 2026-07-28) and
# TestOAuthTypeScriptSDK in host/streamable; and the MCP Inspector, whose CLI
# TestInspectorCLI drives. Needs node >= 20 (the 2.x
# client's floor) and npm. Does nothing when both are already installed.
set -euo pipefail
cd "$(dirname "$0")/../internal/tools/ts"
if [ -d node_modules/@modelcontextprotocol/sdk ] && [ -d node_modules/@modelcontextprotocol/client ] &&
	[ -d node_modules/@modelcontextprotocol/inspector ]; then
	exit 0
fi
npm install --no-audit --no-fund --no-package-lock --loglevel=error
for p in sdk client inspector; do
	echo "installed @modelcontextprotocol/$p $(node -p "require('./node_modules/@modelcontextprotocol/$p/package.json').version") into internal/tools/ts/node_modules"
done
