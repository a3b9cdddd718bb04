#!/usr/bin/env bash
# Installs redis-server (the Debian package) for the store's contract tests
# (store TestRedis*) and the two-replica test (cmd/mcphost/internal/systest/cluster TestReplicas*).
# The tests start their own private instance on a free loopback port with
# no persistence; this script only makes the binary available, and stops
# the system instance the package may start. Does nothing when
# redis-server is already on PATH. Needs root or sudo, and apt.
#
#   scripts/redis.sh
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then
	redis-server --version | sed -n 1p # sed reads to the end: no SIGPIPE under pipefail
	exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then sudo=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends redis-server >/dev/null
# The package's init script may start a system redis on 127.0.0.1:6379;
# the tests run their own, so stop it if it runs.
if command -v service >/dev/null 2>&1; then $sudo service redis-server stop >/dev/null 2>&1 || true; fi
redis-server --version | sed -n 1p
