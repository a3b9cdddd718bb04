#!/usr/bin/env bash
# Installs the official MCP TypeScript SDK (pinned in internal/tools/ts/
# package.json) into internal/tools/ts/node_modules (git-ignored), for the
# tests that drive mcphost with it: TestTSClient in cmd/mcphost (stdio and
# Streamable HTTP) and TestOAuthTypeScriptSDK in host/streamable. Needs
# node >= 18 and npm. Does nothing when it is already installed.
set -euo pipefail
cd "$(dirname "$0")/../internal/tools/ts"
if [ -d node_modules/@modelcontextprotocol/sdk ]; then
	exit 0
fi
npm install --no-audit --no-fund --no-package-lock --loglevel=error
echo "installed $(node -p 'require("./node_modules/@modelcontextprotocol/sdk/package.json").version') into internal/tools/ts/node_modules"
