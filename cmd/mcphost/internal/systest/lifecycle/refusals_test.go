package lifecycle

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStateSurvivesRefusals (issue 38): a plugin that keeps a count in
// its instance counts on, 1…N, across what the host refuses it, each
// refusal an error the plugin returns, never a fault that replaces its
// instance:
//
//   - 2026-07-28: a consent question the client never answers (an
//     abandoned input_required round: the client does not retry), the
//     same question answered deny on a retry;
//   - 2025-11-25: the question answered deny (elicitation/create);
//   - both: a host neither allowed_hosts nor may_request_hosts names,
//     and a key-value write past kv_max_bytes.
//
// With the official Go SDK client, over stdio and Streamable HTTP.
func TestStateSurvivesRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a Go plugin")
	}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(version+"/"+transport, func(t *testing.T) {
				t.Parallel()
				checkStateSurvivesRefusals(t, version, transport)
			})
		}
	}
}

func checkStateSurvivesRefusals(t *testing.T, version, transport string) {
	up := systest.NewUpstream(t)
	p := &systest.Person{}
	// The rounds are driven by hand, so that one can be abandoned.
	client := mcp.NewClient(&mcp.Implementation{Name: "refusals", Version: "1"},
		&mcp.ClientOptions{ElicitationHandler: p.Handle, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}})
	// It may ask for 127.0.0.1 (any port) and nothing else, and keep 64
	// bytes of key-value state.
	args := []string{"--config", counterConfigWith(t, "may_request_hosts = [\"127.0.0.1\"]\nkv_max_bytes = 64\n"), "--no-watch"}
	var cs *mcp.ClientSession
	if transport == "stdio" {
		cs = systest.StartServerEra(t, client, version, args...).Session
	} else {
		cs = systest.ConnectHTTP(t, client, version, args...)
	}
	ctx := context.Background()
	if _, err := cs.ListTools(ctx, nil); err != nil { // waits for the plugin's build and load
		t.Fatalf("tools/list: %v", err)
	}
	call := func(tool string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			t.Fatalf("tools/call %s: %v", tool, err)
		}
		return res
	}
	want := 0
	count := func(after string) {
		t.Helper()
		want++
		if res := call("count", nil); res.IsError || systest.TextOf(t, res) != fmt.Sprint(want) {
			t.Fatalf("count after %s: got %q (isError %v); want %d: the plugin's state was lost", after, systest.TextOf(t, res), res.IsError, want)
		}
	}
	refused := func(step string, res *mcp.CallToolResult, subs ...string) {
		t.Helper()
		text := systest.TextOf(t, res)
		if !res.IsError || !strings.Contains(text, "refused: true") {
			t.Fatalf("%s: got %q (isError %v); want the plugin's error result for a refusal", step, text, res.IsError)
		}
		for _, s := range subs {
			if !strings.Contains(text, s) {
				t.Errorf("%s: %q; want it to name %q", step, text, s)
			}
		}
	}
	for range 3 {
		count("the start")
	}
	asked := map[string]any{"url": up.URL + "/asked"}
	if version == "2026-07-28" {
		res := call("fetch", asked)
		if !res.NeedsInput() || len(res.InputRequests) != 1 {
			t.Fatalf("fetch of a may_request_hosts host: got %+v; want an input_required round with one question", res)
		}
		count("an abandoned input_required round") // the client never retries
		res = call("fetch", asked)
		var key string
		for k := range res.InputRequests {
			key = k
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fetch", Arguments: asked, RequestState: res.RequestState,
			InputResponses: mcp.InputResponseMap{key: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": "deny"}}}})
		if err != nil {
			t.Fatalf("fetch retried with deny: %v", err)
		}
		refused("fetch retried with deny", res, "a person denied it", "allowed_hosts")
		count("a consent refusal")
	} else {
		p.Say("deny")
		refused("fetch answered deny", call("fetch", asked), "a person denied it", "allowed_hosts")
		if q := p.Asked(); len(q) != 1 {
			t.Errorf("questions asked: %q; want one", q)
		}
		count("a consent refusal")
	}
	refused("fetch of a host no key names", call("fetch", map[string]any{"url": "http://localhost:" + up.Port + "/miss"}),
		"may_request_hosts does not name it", "allowed_hosts")
	count("an allowed_hosts miss")
	if res := call("store", map[string]any{"key": "k", "value": strings.Repeat("x", 100)}); !res.IsError || !strings.Contains(systest.TextOf(t, res), "kv_max_bytes") {
		t.Fatalf("store past kv_max_bytes: got %q (isError %v); want the quota error", systest.TextOf(t, res), res.IsError)
	}
	count("a key-value quota error")
	if n := up.Hits.Load(); n != 0 {
		t.Errorf("the upstream server got %d requests; want none", n)
	}
}

// TestCKitHTTPRefusal builds a C plugin that fetches with mcphost.h's
// mcp_http and keeps a counter in a global (sdk-guest/c/testdata/
// httpcount.c), and serves it with the Go SDK client: a fetch of a host
// its allowed_hosts does not name is the plugin's own error result (the
// refusal named, refused set), the counter counts on across it, and an
// allowed fetch answers.
func TestCKitHTTPRefusal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a C plugin and runs mcphost serve")
	}
	wasm := systest.BuildCKitTestdata(t, "httpcount")
	checkKitHTTPRefusal(t, "c", wasm)
}

// TestASKitHTTPRefusal is TestCKitHTTPRefusal for an AssemblyScript
// plugin that fetches with mcphost.ts's http
// (sdk-guest/assemblyscript/testdata/httpcount.ts).
func TestASKitHTTPRefusal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an AssemblyScript plugin and runs mcphost serve")
	}
	wasm := systest.BuildASKitTestdata(t, "httpcount")
	checkKitHTTPRefusal(t, "as", wasm)
}

// checkKitHTTPRefusal serves wasm as plugin name, allowed to reach one
// loopback server, with the Go SDK client: its counter (a global) counts
// on across a fetch its allowed_hosts refuses, which is its own error
// result naming the refusal, and an allowed fetch answers.
func checkKitHTTPRefusal(t *testing.T, name, wasm string) {
	t.Helper()
	up := systest.NewUpstream(t)
	conf := filepath.Join(t.TempDir(), "plugins.toml")
	body := fmt.Sprintf("[[plugin]]\nname = %q\npath = %s\nallowed_hosts = [\"127.0.0.1:%s\"]\n", name, systest.Quote(wasm), up.Port)
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := systest.StartServer(t, mcp.NewClient(&mcp.Implementation{Name: "ckit", Version: "1"}, nil), "--config", conf, "--no-watch").Session
	call := func(tool string, args map[string]any) (string, bool) {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name + "_" + tool, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return systest.TextOf(t, res), res.IsError
	}
	want := 0
	count := func(after string) {
		t.Helper()
		want++
		if got, isErr := call("count", map[string]any{}); isErr || got != fmt.Sprint(want) {
			t.Fatalf("count after %s: %q (isError %v); want %d: the plugin's state was lost", after, got, isErr, want)
		}
	}
	count("the start")
	count("the start")
	got, isErr := call("fetch", map[string]any{"url": "http://localhost:" + up.Port + "/miss"})
	if !isErr || !strings.Contains(got, "refused: true") || !strings.Contains(got, "allowed_hosts") {
		t.Fatalf("fetch of a host allowed_hosts does not name: %q (isError %v); want the plugin's error naming allowed_hosts, refused", got, isErr)
	}
	count("an allowed_hosts miss")
	if got, isErr := call("fetch", map[string]any{"url": up.URL + "/ok"}); isErr || got != "200 hello from upstream" {
		t.Fatalf("allowed fetch: %q (isError %v); want 200 and the upstream's text", got, isErr)
	}
	count("an allowed fetch")
}
