package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// recTracer records spans with their parents (through ctx) and injects a
// header naming the span the request was made in.
type recTracer struct {
	mu    sync.Mutex
	spans []*recSpan
}

type recSpan struct {
	t      *recTracer
	name   string
	parent string
	attrs  map[string]string
	err    error
	ended  bool
}

type recSpanKey struct{}

func (t *recTracer) Start(ctx context.Context, name string, attrs ...slog.Attr) (context.Context, Span) {
	sp := &recSpan{t: t, name: name, attrs: map[string]string{}}
	if p, ok := ctx.Value(recSpanKey{}).(*recSpan); ok {
		sp.parent = p.name
	}
	sp.SetAttrs(attrs...)
	t.mu.Lock()
	t.spans = append(t.spans, sp)
	t.mu.Unlock()
	return context.WithValue(ctx, recSpanKey{}, sp), sp
}

func (t *recTracer) Inject(ctx context.Context, h http.Header) {
	if p, ok := ctx.Value(recSpanKey{}).(*recSpan); ok {
		h.Set("traceparent", "span:"+p.name)
	}
}

func (s *recSpan) SetAttrs(attrs ...slog.Attr) {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	for _, a := range attrs {
		s.attrs[a.Key] = a.Value.String()
	}
}

func (s *recSpan) End(err error) {
	s.t.mu.Lock()
	defer s.t.mu.Unlock()
	s.err, s.ended = err, true
}

// byName returns the ended spans named name.
func (t *recTracer) byName(name string) []*recSpan {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []*recSpan
	for _, s := range t.spans {
		if s.name == name && s.ended {
			out = append(out, s)
		}
	}
	return out
}

// TestTracer: an Engine with a Tracer gives a span to the load, to each
// guest call, and beneath it to each host function: outbound HTTP (with
// server.address, the allowed_hosts decision, the status, and the trace
// context in the request's headers) and secret reads (by name, never
// value) and file opens (by guest path).
func TestTracer(t *testing.T) {
	needGuest(t)
	tr := &recTracer{}
	eng, err := NewEngine(context.Background(), EngineOptions{CacheDir: testEngine.CacheDir(), Logger: slog.New(slog.DiscardHandler), Tracer: tr})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close(context.Background())
	got := make(chan string, 1)
	srv, _ := serveOn(t, "127.0.0.1:0", "traced", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("traceparent")
		fmt.Fprint(w, "ok")
	}))
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hi"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := eng.Load(context.Background(), "traced", guestWasm, Limits{Instances: 1, AllowedHosts: []string{"127.0.0.1:" + portOf(t, srv)},
		Secrets: map[string]string{"gh/token": "s3cret"}, AllowedPaths: []Mount{{Host: dir, Guest: "/data", ReadOnly: true}}})
	if err != nil {
		t.Fatal(err)
	}
	if l := tr.byName("load traced"); len(l) != 1 || l[0].attrs["mcp.plugin"] != "traced" || l[0].err != nil {
		t.Errorf("load spans %+v; want one for plugin traced", l)
	}

	tests := []struct {
		name, export string
		in           string
		span         string
		want         map[string]string
		header       string // the traceparent the server got; "" when it got no request
	}{
		{"allowed", "http", srv.URL + "/x", "http_request GET",
			map[string]string{"server.address": "127.0.0.1", "mcphost.egress.decision": "allowed", "http.response.status_code": "200"},
			"span:http_request GET"},
		{"refused", "http", "http://localhost:" + portOf(t, srv) + "/", "http_request GET",
			map[string]string{"server.address": "localhost", "mcphost.egress.decision": "refused", "mcphost.egress.key": "allowed_hosts", "error.type": "refused"}, ""},
		{"file open", "read", "/data/notes.txt", "open",
			map[string]string{"file.path": "/data/notes.txt", "mcphost.fs.write": "false"}, ""},
		{"file missing", "read", "/data/nope.txt", "open",
			map[string]string{"file.path": "/data/nope.txt", "error.type": "no such file or directory"}, ""},
		{"secret", "host", string(hostCall(abi.HostKeyringSecret, `{"service":"gh","user":"token"}`)), "host get_keyring_secret",
			map[string]string{"mcphost.secret.name": "gh/token", "mcphost.secret.found": "true"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(tr.byName(tc.span))
			_, _ = m.Call(context.Background(), tc.export, []byte(tc.in))
			spans := tr.byName(tc.span)[before:]
			var sp *recSpan
			for _, s := range spans {
				if tc.span != "open" || s.attrs["file.path"] == tc.in {
					sp = s
				}
			}
			if sp == nil {
				t.Fatalf("no new %q span for %s among %d", tc.span, tc.in, len(spans))
			}
			if sp.parent != "wasm "+tc.export {
				t.Errorf("parent %q; want the guest call %q", sp.parent, "wasm "+tc.export)
			}
			for k, v := range tc.want {
				if sp.attrs[k] != v {
					t.Errorf("%s = %q; want %q", k, sp.attrs[k], v)
				}
			}
			for k, v := range sp.attrs {
				if strings.Contains(v, "s3cret") {
					t.Errorf("attribute %s holds the secret's value", k)
				}
			}
			if tc.header != "" {
				if h := <-got; h != tc.header {
					t.Errorf("server got traceparent %q; want %q", h, tc.header)
				}
			}
		})
	}
	calls := tr.byName("wasm http")
	if len(calls) != 2 || calls[0].err != nil || calls[1].attrs["error.type"] != KindHostPanic.String() {
		t.Errorf("guest call spans %+v; want a success and a host function failure", calls)
	}
}
