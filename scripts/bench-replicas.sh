#!/usr/bin/env bash
# Throughput of one vs two `mcphost serve --http` replicas behind haproxy
# (round-robin, no stickiness), on this machine: the same stateless
# 2026-07-28 tools/call POSTed by ab (apache2-utils) through haproxy to a
# backend of one replica, then of two, and the ratio of requests/s.
#
#   scripts/bench-replicas.sh                 # 20000 calls, 32 concurrent
#   N=50000 C=64 TOOL=test_simple_text scripts/bench-replicas.sh
#
# A benchmark, not a test: it never fails on a figure. On a machine with
# few cores the replicas, haproxy and ab share them, so expect a ratio
# well below 2 there; the ratio says how much a second replica buys on
# *this* machine. Needs haproxy (scripts/install-haproxy.sh) and ab
# (installed with apt-get when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
N=${N:-20000}
C=${C:-32}
TOOL=${TOOL:-test_simple_text}
CONFIG=${CONFIG:-examples/conformance/plugins.toml}

PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin # Debian's haproxy is /usr/sbin/haproxy
command -v haproxy >/dev/null || bash scripts/install-haproxy.sh >/dev/null
if ! command -v ab >/dev/null; then
	sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends apache2-utils >/dev/null
fi

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/mcphost" ./cmd/mcphost

# waitready URL: poll an external process's probe, bounded (60 s).
waitready() {
	for _ in $(seq 1 300); do
		curl -sf "$1" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	echo "bench-replicas: $1 never became ready" >&2
	return 1
}

# replica NAME: start one; sets addr to its host:port. (Not run in $(…):
# the background process would hold the substitution open, and its pid
# would be lost.)
replica() {
	addr=""
	"$work/mcphost" serve --http 127.0.0.1:0 --config "$CONFIG" --no-watch >/dev/null 2>"$work/$1.log" &
	pids+=($!)
	for _ in $(seq 1 300); do
		addr=$(grep -o 'addr=http://127.0.0.1:[0-9]*' "$work/$1.log" 2>/dev/null | head -1 | sed 's|addr=http://||') || true
		[ -n "$addr" ] && break
		sleep 0.2
	done
	[ -n "$addr" ] || { echo "bench-replicas: replica $1 did not start:" >&2; cat "$work/$1.log" >&2; return 1; }
	waitready "http://$addr/readyz"
}

freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# balancer NAME BACKEND…: start haproxy over the backends; sets port.
balancer() {
	local name=$1; shift
	port=$(freeport)
	{
		printf 'global\n    maxconn 4096\ndefaults\n    mode http\n    timeout connect 5s\n    timeout client 60s\n    timeout server 60s\n'
		printf 'frontend mcp\n    bind 127.0.0.1:%s\n    default_backend replicas\nbackend replicas\n    balance roundrobin\n' "$port"
		local i=0
		for b in "$@"; do printf '    server r%d %s\n' "$i" "$b"; i=$((i+1)); done
	} >"$work/$name.cfg"
	haproxy -db -f "$work/$name.cfg" >"$work/$name.haproxy.log" 2>&1 &
	pids+=($!)
	waitready "http://127.0.0.1:$port/readyz"
}

replica r0; r0=$addr
replica r1; r1=$addr
balancer one "$r0"; lb1=$port
balancer two "$r0" "$r1"; lb2=$port

printf '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s","arguments":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"}}}}' "$TOOL" >"$work/body.json"

# rps PORT: requests per second of N calls through the balancer on PORT;
# any failed or non-2xx request aborts the benchmark.
rps() {
	local out
	out=$(ab -q -k -n "$N" -c "$C" -p "$work/body.json" -T application/json \
		-H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
		-H 'Mcp-Method: tools/call' -H "Mcp-Name: $TOOL" "http://127.0.0.1:$1/mcp")
	local failed non2xx
	failed=$(awk '/^Failed requests:/ {print $3}' <<<"$out")
	non2xx=$(awk '/^Non-2xx responses:/ {print $3}' <<<"$out")
	if [ "${failed:-0}" != 0 ] || [ "${non2xx:-0}" != 0 ]; then
		echo "bench-replicas: $failed failed, ${non2xx:-0} non-2xx responses" >&2
		echo "$out" >&2
		return 1
	fi
	awk '/^Requests per second:/ {print $4}' <<<"$out"
}

# Warm both replicas (Wasm is compiled at load, but Go's heap and the
# instance pools grow on first use), then measure.
N=$((N / 10)) rps "$lb2" >/dev/null
one=$(rps "$lb1")
two=$(rps "$lb2")
ratio=$(awk -v a="$one" -v b="$two" 'BEGIN { printf "%.2f", b / a }')
echo "cores: $(nproc)  calls: $N  concurrency: $C  tool: $TOOL"
echo "1 replica : $one req/s"
echo "2 replicas: $two req/s"
echo "ratio 2/1 : $ratio"
