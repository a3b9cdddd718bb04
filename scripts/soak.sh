#!/usr/bin/env bash
# Runs mcphost under mixed load for a while (default 30m) and fails if its
# RSS, goroutines or open fds grow without bound or a call is lost:
#
#   scripts/soak.sh        # 30 minutes
#   scripts/soak.sh 5m
#
# The driver is cmd/mcphost-soak (see its doc comment for what it runs).
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-30m}
bin=$(mktemp -d)/mcphost
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./cmd/mcphost
go run ./cmd/mcphost-soak -mcphost "$bin" -faulty examples/faulty -duration "$duration"
