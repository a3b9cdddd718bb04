package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/abi"
)

// recSpan is an ended span as TestTracer checks it: the name of its
// parent and its attributes as strings.
type recSpan struct {
	name, parent string
	attrs        map[string]string
	failed       bool // status Error
	spanContext  trace.SpanContext
}

// recSpans returns the spans named name that rec saw end, in order.
func recSpans(rec *tracetest.SpanRecorder, name string) []recSpan {
	ended := rec.Ended()
	names := map[trace.SpanID]string{}
	for _, s := range ended {
		names[s.SpanContext().SpanID()] = s.Name()
	}
	var out []recSpan
	for _, s := range ended {
		if s.Name() != name {
			continue
		}
		sp := recSpan{name: s.Name(), parent: names[s.Parent().SpanID()], attrs: map[string]string{},
			failed: s.Status().Code == codes.Error, spanContext: s.SpanContext()}
		for _, a := range s.Attributes() {
			sp.attrs[string(a.Key)] = a.Value.Emit()
		}
		out = append(out, sp)
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
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	eng, err := NewEngine(context.Background(), EngineOptions{CacheDir: testEngine.CacheDir(), Logger: slog.New(slog.DiscardHandler),
		Tracer: tp.Tracer("test"), Propagator: propagation.TraceContext{}})
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
	if l := recSpans(rec, "load traced"); len(l) != 1 || l[0].attrs["mcp.plugin"] != "traced" || l[0].failed {
		t.Errorf("load spans %+v; want one for plugin traced", l)
	}

	tests := []struct {
		name, export string
		in           string
		span         string
		want         map[string]string
		header       bool // the server got a request, with the span's traceparent
	}{
		{"allowed", "http", srv.URL + "/x", "http_request GET",
			map[string]string{"server.address": "127.0.0.1", "mcphost.egress.decision": "allowed", "http.response.status_code": "200"},
			true},
		{"refused", "http", "http://localhost:" + portOf(t, srv) + "/", "http_request GET",
			map[string]string{"server.address": "localhost", "mcphost.egress.decision": "refused", "mcphost.egress.key": "allowed_hosts", "error.type": "refused"}, false},
		{"file open", "read", "/data/notes.txt", "open",
			map[string]string{"file.path": "/data/notes.txt", "mcphost.fs.write": "false"}, false},
		{"file missing", "read", "/data/nope.txt", "open",
			map[string]string{"file.path": "/data/nope.txt", "error.type": "no such file or directory"}, false},
		{"secret", "host", string(hostCall(abi.HostKeyringSecret, `{"service":"gh","user":"token"}`)), "host get_keyring_secret",
			map[string]string{"mcphost.secret.name": "gh/token", "mcphost.secret.found": "true"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(recSpans(rec, tc.span))
			_, _ = m.Call(context.Background(), tc.export, []byte(tc.in))
			spans := recSpans(rec, tc.span)[before:]
			var sp *recSpan
			for i, s := range spans {
				if tc.span != "open" || s.attrs["file.path"] == tc.in {
					sp = &spans[i]
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
			if tc.header {
				want := "00-" + sp.spanContext.TraceID().String() + "-" + sp.spanContext.SpanID().String() + "-01"
				if h := <-got; h != want {
					t.Errorf("server got traceparent %q; want %q (the %s span's)", h, want, tc.span)
				}
			}
		})
	}
	calls := recSpans(rec, "wasm http")
	if len(calls) != 2 || calls[0].failed || !calls[1].failed || calls[1].attrs["error.type"] != KindHostPanic.String() {
		t.Errorf("guest call spans %+v; want a success and a host function failure", calls)
	}
}
