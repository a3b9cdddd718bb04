#!/usr/bin/env bash
# Prints mcphost's performance against its targets in one run. Every
# comparison runs its peers in the same process, interleaved, and reports a
# ratio, so the noise of a shared machine mostly cancels.
#
#   scripts/bench.sh            # about 4–5 minutes on 2 cores
#   N=4000 scripts/bench.sh     # fewer calls per round (noisier)
#
# Targets (issue 10): ≥0.5× the limit and ≥2× go-sdk at 4 in flight, ≥1×
# go-sdk serial; 3 MB echo ≤50 ms; warm start to tools listed ≤150 ms;
# RSS ≤60 MB after 100 calls; boundary overhead ≤3 µs per call (WAT-size
# guest).
set -euo pipefail
cd "$(dirname "$0")/.."
# At ~25k calls/s, a round of 4000 calls lasts 0.16 s: too short to
# average out this machine's noise. 20000 makes each round last ~1 s.
N=${N:-20000}

bench() { # bench <package> <regexp> <benchtime>
	go test -run '^$' -bench "$2" -benchtime "$3" "$1" 2>&1 | grep -vE '^(goos|goarch|pkg|cpu|PASS|ok )' || true
}

echo "== tools/call over stdio: mcphost vs the limit and go-sdk (x-limit, x-gosdk are mcphost's ratios)"
bench ./cmd/mcphost 'Peers' "${N}x"
echo "== 3 MB echo round trip (p50-µs)"
bench ./cmd/mcphost 'Echo3MB' 20x
echo "== start → tools listed, root plugins.toml (ms-to-tools; warm is the target)"
bench ./cmd/mcphost 'Startup/warm$' 5x
echo "== RSS after 100 calls, root plugins.toml"
bench ./cmd/mcphost 'RSS' 1x
echo "== the boundary alone: per-call cost and allocations, per runtime"
bench ./sandbox 'Boundary|CallEcho$|EchoMiB' 2000x
echo "== timeouts: wazero's close-on-done vs the loop poll, timeouts on in both (close-on-done/poll is the ratio of p50s)"
bench ./sandbox 'Timeouts/.*/ratio' "${N}x"
