#!/usr/bin/env bash
# Runs every fuzz target in the module for a bounded time each.
#
#   scripts/fuzz.sh              # FUZZTIME=15s per target
#   FUZZTIME=2m scripts/fuzz.sh  # longer, by hand
#
# Targets are found with `go test -list`, so a fuzzer added or moved to
# another package is picked up without editing this script. Seeds live in
# each package's f.Add calls and testdata/fuzz/<Target>/; a failing input
# is written there by `go test -fuzz`, so it becomes a regression seed
# once committed. Fails on the first target that finds a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-15s}
n=0
for pkg in $(go list ./...); do
	targets=$(go test -list '^Fuzz' "$pkg" 2>/dev/null | grep '^Fuzz' || true)
	for t in $targets; do
		echo "-- $pkg $t ($fuzztime)"
		out=$(mktemp)
		if ! go test -run '^$' -fuzz "^${t}\$" -fuzztime "$fuzztime" "$pkg" >"$out" 2>&1; then
			tail -n 40 "$out"
			echo "fuzz: $t failed; its input is in $(go list -f '{{.Dir}}' "$pkg")/testdata/fuzz/$t"
			exit 1
		fi
		tail -n 2 "$out"
		rm -f "$out"
		n=$((n + 1))
	done
done
[ "$n" -gt 0 ] || { echo "no fuzz targets found"; exit 1; }
echo "fuzz: $n targets, $fuzztime each, no failures"
