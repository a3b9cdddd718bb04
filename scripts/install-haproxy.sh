#!/usr/bin/env bash
# Installs haproxy (the Debian package) for the two-replica test
# (cmd/mcphost/internal/systest/cluster TestReplicas) and scripts/bench-replicas.sh. Does nothing
# when haproxy is already installed. Needs root or sudo, and apt.
#
# Debian installs it as /usr/sbin/haproxy, which a user's PATH often lacks;
# the tests and bench-replicas.sh look there too, so this script looks
# there as well and prints the path it found.
#
#   scripts/install-haproxy.sh
set -euo pipefail
PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin
if command -v haproxy >/dev/null 2>&1; then
	haproxy -v | sed -n 1p # sed reads to the end: no SIGPIPE under pipefail
	command -v haproxy
	exit 0
fi
sudo=""
if [ "$(id -u)" != 0 ]; then sudo=sudo; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends haproxy >/dev/null
# The package may start a system haproxy on *:80 via its init script; the
# test and the benchmark run their own on loopback, so stop it if it runs.
if command -v service >/dev/null 2>&1; then $sudo service haproxy stop >/dev/null 2>&1 || true; fi
haproxy -v | sed -n 1p # sed reads to the end: no SIGPIPE under pipefail
command -v haproxy
