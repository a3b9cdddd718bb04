#!/usr/bin/env bash
# The README's test command: installs what the tests need, then runs every
# test of the module under the race detector, with a line per package as it
# ends, a line each minute naming the packages still running, and at the
# end every skipped test with its reason.
#
# What it installs (each step is cached, so a second run starts at once):
#   haproxy                  scripts/install-haproxy.sh   (apt; TestReplicas)
#   redis-server             scripts/redis.sh             (apt; the store's tests, replicas)
#   C, AssemblyScript, TS    scripts/kits.sh --env        (apt, npm; TestKitTemplates)
#   components               scripts/components.sh --env  (npm jco; the component tests)
#   Chromium, MCP Apps SDK   scripts/apps-browser.sh --env (apt, npm; TestAppsBrowser)
#   TypeScript SDK clients   scripts/ts-sdk.sh            (npm; TestTSClient, TestOAuthTypeScriptSDK, TestInspectorCLI)
#   Jaeger                   scripts/jaeger.sh            (go build, ~12 min cold; TestJaegerTrace)
# A step that fails is named with the tests that will skip; with CI=true
# it fails the run instead, and so do the tests that would skip.
#
#   scripts/test.sh                          # everything: ./...
#   scripts/test.sh -run TestReplicas ./cmd/mcphost/internal/systest/cluster   # go test flags and packages
#   MCPHOST_TEST_SETUP=off scripts/test.sh   # skip the installs
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
missing=()

# setup DESC TESTS CMD...: runs CMD (its output to the log), says what it
# did, and remembers a failure.
setup() {
	local desc=$1 tests=$2
	shift 2
	local t0=$SECONDS
	if "$@" >"$log.out" 2>"$log"; then
		echo "setup: $desc ready ($((SECONDS - t0))s)"
	else
		echo "setup: $desc FAILED; $tests will skip. Its last lines:"
		tail -n 5 "$log" | sed 's/^/    /'
		missing+=("$desc")
		return 1
	fi
}

# sudo without a password prompt, or nothing when root.
can_install() { [ "$(id -u)" = 0 ] || sudo -n true 2>/dev/null; }

if [ "${MCPHOST_TEST_SETUP:-on}" != off ]; then
	# Debian puts haproxy in /usr/sbin, which a user's PATH often lacks; the
	# tests look there too (cmd/mcphost/internal/systest/cluster needHAProxy).
	if PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin command -v haproxy >/dev/null || can_install; then
		setup haproxy TestReplicas bash scripts/install-haproxy.sh || :
	else
		echo "setup: haproxy is not installed and sudo asks for a password; TestReplicas will skip (run scripts/install-haproxy.sh once)"
		missing+=(haproxy)
	fi
	setup "the C, AssemblyScript and TypeScript kits' toolchains" TestKitTemplates bash scripts/kits.sh --env &&
		eval "$(cat "$log.out")" || :
	setup "the components (C and JavaScript, built with jco)" "the component tests" bash scripts/components.sh --env &&
		eval "$(cat "$log.out")" || :
	if [ -x "${MCPHOST_CHROMIUM:-/usr/bin/chromium}" ] || can_install; then
		setup "Chromium and the MCP Apps SDK" TestAppsBrowser bash scripts/apps-browser.sh --env &&
			eval "$(cat "$log.out")" || :
	else
		echo "setup: chromium is not installed and sudo asks for a password; TestAppsBrowser will skip (run scripts/apps-browser.sh once)"
		missing+=(chromium)
	fi
	if command -v redis-server >/dev/null || can_install; then
		setup redis-server "the store's Redis tests and the replica tests" bash scripts/redis.sh || :
	else
		echo "setup: redis-server is not installed and sudo asks for a password; the store's Redis tests will skip (run scripts/redis.sh once)"
		missing+=(redis-server)
	fi
	setup "the TypeScript SDK clients" "TestTSClient, TestOAuthTypeScriptSDK and TestInspectorCLI" bash scripts/ts-sdk.sh || :
	if [ -z "${MCPHOST_JAEGER:-}" ]; then
		echo "setup: Jaeger is a go build of about 12 minutes the first time (cached after)"
		setup Jaeger TestJaegerTrace bash scripts/jaeger.sh && MCPHOST_JAEGER=$(cat "$log.out") || :
		export MCPHOST_JAEGER
	fi
	rm -f "$log.out"
	if [ ${#missing[@]} -gt 0 ] && [ "${CI:-}" = true ]; then
		echo "setup failed with CI=true: ${missing[*]}" >&2
		exit 1
	fi
fi

args=("$@")
took=""
[ ${#args[@]} -gt 0 ] || { args=(./...); took="   (about 5 minutes on 2 idle cores with warm caches, 16 on busy ones; sandbox and the system tests of cmd/mcphost take longest)"; }
pkgs=()
for a in "${args[@]}"; do case $a in ./*) pkgs+=("$a") ;; esac; done
[ ${#pkgs[@]} -gt 0 ] || pkgs=(.)
go build -o "$log.progress" ./internal/testprogress
trap 'rm -f "$log" "$log.progress" "$log.race"' EXIT
echo "go test -race -count=1 -timeout 30m ${args[*]}$took"
# shellcheck disable=SC2046 # one argument per package
status=0
go test -json -race -count=1 -timeout 30m "${args[@]}" 2>&1 |
	"$log.progress" -race-skips "$log.race" $(go list "${pkgs[@]}") || status=$?

# Tests that skip under the race detector (compiling a Go guest or the
# JavaScript component takes minutes with it) run again without it, so
# that every test runs.
if [ -s "$log.race" ]; then
	rpkgs=$(cut -d' ' -f1 "$log.race" | sort -u)
	pattern=$(cut -d' ' -f2 "$log.race" | sort -u | paste -sd'|')
	echo
	echo "go test -count=1 -run '^($pattern)\$' (the tests that skip under -race, without it)"
	# shellcheck disable=SC2086 # one argument per package
	go test -json -count=1 -timeout 30m -run "^($pattern)\$" $rpkgs 2>&1 | "$log.progress" $rpkgs || status=$?
fi
exit $status
