package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// healthy loads the kinds component beside a hostile one and returns a
// check that it still answers: one hostile component must not hurt the
// rest of the host.
func healthy(t *testing.T) func(after string) {
	t.Helper()
	m, err := testEngine.Load(context.Background(), "kinds", componentWasm(t, "kinds"), Limits{Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return func(after string) {
		t.Helper()
		res, err := componentCall(t, m, "greet", `{"name":"still here"}`)
		if err != nil || len(res.Content) != 1 || res.Content[0].Text != "¡hola, still here!" {
			t.Errorf("after %s, a healthy plugin answered %+v, %v", after, res, err)
		}
	}
}

// TestComponentLiftBudget calls a component whose result is a list of
// strings all pointing at one region (testdata/wat/amplify.wat): 16000
// strings of 1 MiB would make the host copy 16 GB. Lifting counts the
// bytes it copies against the output limit as it goes, so the call fails
// with a plain message after at most the limit and one string; the next
// call gets a fresh instance, and another plugin is not hurt.
func TestComponentLiftBudget(t *testing.T) {
	wasm := componentWasm(t, "amplify")
	check := healthy(t)
	for _, out := range []int{1 << 20, 0} { // 0: the default limit
		t.Run(fmt.Sprintf("max output %d", out), func(t *testing.T) {
			lim := Limits{Instances: 1, MaxOutputBytes: out}
			m, err := testEngine.Load(context.Background(), "amplify", wasm, lim)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close(context.Background())
			if res, err := componentCall(t, m, "amplify", `{"n":3,"size":4}`); err != nil || string(res.StructuredContent) != `{"result":["aaaa","aaaa","aaaa"]}` {
				t.Fatalf("amplify 3×4: %s, %v", res.StructuredContent, err)
			}
			limit := cmpOr(out, DefaultMaxOutputBytes)
			_, err = componentCall(t, m, "amplify", `{"n":16000,"size":1048576}`)
			var ce *CallError
			want := fmt.Sprintf("would pass %d bytes, the plugin's output limit", limit)
			if !errors.As(err, &ce) || ce.Kind != KindTrap || !strings.Contains(ce.Detail, want) {
				t.Fatalf("amplify 16000×1 MiB: %v; want a trap saying %q", err, want)
			}
			if res, err := componentCall(t, m, "amplify", `{"n":1,"size":2}`); err != nil || string(res.StructuredContent) != `{"result":["aa"]}` {
				t.Errorf("after the refusal: %s, %v", res.StructuredContent, err)
			}
			check("a result over the output limit")
		})
	}
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// TestComponentHostMemory calls a component that makes the host hold
// more at each call (testdata/c/abuse.c): large header values appended to
// one wasi:http fields resource it keeps (hoard), and request bodies it
// writes and never sends (stuff). What the host holds for it is counted
// against the plugin's memory limit, the call that would pass it fails
// with a plain message, and dropping the instance frees it all (the next
// call starts from nothing).
func TestComponentHostMemory(t *testing.T) {
	wasm := componentWasm(t, "abuse")
	check := healthy(t)
	lim := Limits{Instances: 1, MemoryPages: 128} // 8 MiB
	for _, tt := range []struct {
		tool, args string
		held       []string // the answers while under the limit
		what       string   // what the refusal names
	}{
		{"hoard", `{"count":8,"size":262144}`, []string{"8", "16", "24"}, "a header field"}, // 2 MiB a call
		{"stuff", `{"mib":3}`, []string{"3", "6"}, "a request body"},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			m, err := testEngine.Load(context.Background(), "abuse", wasm, lim)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close(context.Background())
			for i, want := range tt.held {
				res, err := componentCall(t, m, tt.tool, tt.args)
				if err != nil || len(res.Content) != 1 || res.Content[0].Text != want {
					t.Fatalf("call %d: %+v, %v; want %s held", i+1, res, err, want)
				}
			}
			_, err = componentCall(t, m, tt.tool, tt.args)
			var ce *CallError
			want := "would pass the plugin's memory limit of 8388608 bytes (" + tt.what + " needs"
			if !errors.As(err, &ce) || ce.Kind != KindOutOfMemory || !strings.Contains(ce.Detail, want) {
				t.Fatalf("call %d: %v; want out of memory saying %q", len(tt.held)+1, err, want)
			}
			if res, err := componentCall(t, m, tt.tool, tt.args); err != nil || len(res.Content) != 1 || res.Content[0].Text != tt.held[0] {
				t.Errorf("after the refusal: %+v, %v; want a fresh instance holding %s", res, err, tt.held[0])
			}
			if st := m.Stats(); st.Discarded != 1 {
				t.Errorf("%d instances discarded, want 1", st.Discarded)
			}
			check("host memory over the limit")
		})
	}
}

// TestComponentForbiddenHeaders sets, through each of wasi:http's fields
// functions, the headers wasmtime forbids a guest (testdata/c/abuse.c,
// set-header): each is refused with header-error forbidden; another
// header is accepted.
func TestComponentForbiddenHeaders(t *testing.T) {
	wasm := componentWasm(t, "abuse")
	m, err := testEngine.Load(context.Background(), "abuse", wasm, Limits{Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	names := []string{"host", "Host", "connection", "keep-alive", "proxy-authenticate", "proxy-authorization",
		"proxy-connection", "transfer-encoding", "upgrade", "TE", "http2-settings"}
	for how, fn := range []string{"append", "set", "from-list"} {
		for _, name := range append(names, "x-fine") {
			res, err := componentCall(t, m, "set-header", fmt.Sprintf(`{"how":%d,"name":%q,"value":"evil.example"}`, how, name))
			want, isErr := "forbidden", true
			if name == "x-fine" {
				want, isErr = "accepted", false
			}
			if err != nil || res.IsError != isErr || len(res.Content) != 1 || res.Content[0].Text != want {
				t.Errorf("%s %q: %+v, %v; want %q", fn, name, res, err, want)
			}
		}
	}
}

// TestComponentHostHeader makes sure the upstream of an allowed address
// sees no Host but the URL's: a guest cannot set one (see
// TestComponentForbiddenHeaders), cannot pass one on from a response's
// headers (testdata/c/abuse.c, relay: the request is denied), and cannot
// hide another destination in the authority or the path.
func TestComponentHostHeader(t *testing.T) {
	abuse := componentWasm(t, "abuse")
	net := componentWasm(t, "net")
	check := healthy(t)
	var mu sync.Mutex
	var hosts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hosts = append(hosts, r.Host)
		mu.Unlock()
		// Headers a guest must not send on.
		w.Header()["Host"] = []string{"evil.example"}
		w.Header().Set("Proxy-Authenticate", "Basic")
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	lim := Limits{Instances: 1, Timeout: 5 * time.Second, AllowedHosts: []string{"127.0.0.1"}}
	ma, err := testEngine.Load(context.Background(), "abuse", abuse, lim)
	if err != nil {
		t.Fatal(err)
	}
	defer ma.Close(context.Background())
	mn, err := testEngine.Load(context.Background(), "net", net, lim)
	if err != nil {
		t.Fatal(err)
	}
	defer mn.Close(context.Background())

	res, err := componentCall(t, ma, "relay", `{"url":"`+srv.URL+`/"}`)
	if err != nil || !res.IsError || len(res.Content) != 1 || res.Content[0].Text != "HTTP-request-denied" {
		t.Errorf("relay: %+v, %v; want the second request denied", res, err)
	}
	if !testLogs.Contains("http request refused: a header only the host may set") {
		t.Error("no log line says why the relayed request was refused")
	}
	for _, url := range []string{
		"http://evil.example@" + addr + "/",
		"http://" + addr + "@evil.example/",
	} {
		res, err := componentCall(t, mn, "get", fmt.Sprintf(`{"url":%q,"connect-timeout-ms":0,"first-byte-timeout-ms":0,"between-bytes-timeout-ms":0}`, url))
		if err != nil || !res.IsError || len(res.Content) != 1 || res.Content[0].Text != "HTTP-request-URI-invalid" {
			t.Errorf("get %s: %+v, %v; want HTTP-request-URI-invalid", url, res, err)
		}
	}
	res, err = componentCall(t, mn, "get", `{"url":"`+srv.URL+`/x","connect-timeout-ms":0,"first-byte-timeout-ms":0,"between-bytes-timeout-ms":0}`)
	if err != nil || res.IsError {
		t.Errorf("a plain get: %+v, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hosts) != 2 {
		t.Errorf("upstream saw %d requests (%q), want 2: relay's first and the plain get", len(hosts), hosts)
	}
	for _, h := range hosts {
		if h != addr {
			t.Errorf("upstream saw Host %q, want only the URL's %q", h, addr)
		}
	}
	check("refused headers")
}

// TestComponentSchemaBudget loads a component exporting one type of
// about 2 MB of JSON Schema under 100 names (testdata/wat/schemas.wat):
// its tool list would be about 200 MB, so it fails to load, saying why,
// before any schema is built; the engine goes on loading and serving.
func TestComponentSchemaBudget(t *testing.T) {
	wasm := componentWasm(t, "schemas")
	_, err := testEngine.Load(context.Background(), "schemas", wasm, Limits{Instances: 1})
	var le *LoadError
	want := fmt.Sprintf("the JSON Schemas of the component's 100 exported functions could pass %d bytes, the plugin's output limit", DefaultMaxOutputBytes)
	if !errors.As(err, &le) || le.Stage != "limits" || !strings.Contains(err.Error(), want) {
		t.Fatalf("load: %v; want a limits error saying %q", err, want)
	}
	check := healthy(t)
	check("a component refused for its schemas")
	// The list a component is served with keeps within the limit.
	m, err := testEngine.Load(context.Background(), "kinds", componentWasm(t, "kinds"), Limits{Instances: 1, MaxOutputBytes: 64 << 10})
	if err != nil {
		t.Fatalf("kinds under a 64 KiB output limit: %v", err)
	}
	defer m.Close(context.Background())
	_, ls := guestLists(t, m)
	out, err := json.Marshal(map[string]any{"tools": ls.Tools})
	if err != nil || len(ls.Tools) == 0 || len(out) > 64<<10 {
		t.Errorf("the tools list: %d bytes, %d tools, %v", len(out), len(ls.Tools), err)
	}
}
