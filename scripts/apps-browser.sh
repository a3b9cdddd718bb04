#!/usr/bin/env bash
# Installs what the MCP Apps browser test (cmd/mcphost/internal/systest/clients TestAppsBrowser)
# needs: Debian's chromium (headless; `npx playwright install` cannot
# download a browser here) and, pinned in internal/tools/apps/package.json,
# the official MCP Apps SDK @modelcontextprotocol/ext-apps (AppBridge), the
# official MCP TypeScript client, esbuild (bundles the test's host page)
# and playwright-core (drives chromium). The npm packages go to
# internal/tools/apps/node_modules (git-ignored). Does nothing for what is
# already installed. Needs root or sudo for apt, node >= 20 and npm.
#
#   scripts/apps-browser.sh          # install
#   scripts/apps-browser.sh --env    # install, then print the test's env
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
chromium="${MCPHOST_CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
	sudo=""
	if [ "$(id -u)" != 0 ]; then sudo=sudo; fi
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq >&2
	$sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
	chromium=/usr/bin/chromium
fi
"$chromium" --version >&2
cd "$root/internal/tools/apps"
if [ ! -d node_modules/@modelcontextprotocol/ext-apps ] || [ ! -d node_modules/playwright-core ] || [ ! -d node_modules/esbuild ]; then
	npm install --no-audit --no-fund --no-package-lock --loglevel=error >&2
fi
for p in @modelcontextprotocol/ext-apps @modelcontextprotocol/client playwright-core esbuild; do
	echo "$p $(node -p "require('./node_modules/$p/package.json').version") in internal/tools/apps/node_modules" >&2
done
if [ "${1:-}" = "--env" ]; then
	echo "export MCPHOST_CHROMIUM=$chromium"
fi
