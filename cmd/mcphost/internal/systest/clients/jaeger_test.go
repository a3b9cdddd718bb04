package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// jaegerConfig runs Jaeger's all-in-one on loopback ports only: OTLP/HTTP
// in, the query API out, traces in memory.
const jaegerConfig = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: %s
    grpc:
      endpoint: %s
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 1000
receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`

// TestJaegerTrace is the end-to-end trace: a client with its own span
// sends one tools/call carrying _meta.traceparent to `mcphost serve`
// (stdio, OTEL_* pointing at a real Jaeger), whose fetch plugin GETs a
// loopback server allowed by allowed_hosts. Jaeger's query API must then
// hold one trace: client span → server span → guest call → http_request,
// and the loopback server must have seen the same trace in traceparent.
// It needs Jaeger: MCPHOST_JAEGER=$(bash scripts/jaeger.sh).
func TestJaegerTrace(t *testing.T) {
	jaeger := os.Getenv("MCPHOST_JAEGER")
	if jaeger == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("MCPHOST_JAEGER is not set: CI runs this test with MCPHOST_JAEGER=$(bash scripts/jaeger.sh)")
		}
		t.Skip("MCPHOST_JAEGER is not set; run with MCPHOST_JAEGER=$(bash scripts/jaeger.sh) to test traces against Jaeger")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	otlpAddr, queryAddr, grpcAddr := freeAddr(t), freeAddr(t), freeAddr(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(cfgPath, fmt.Appendf(nil, jaegerConfig, queryAddr, grpcAddr, otlpAddr), 0o600); err != nil {
		t.Fatal(err)
	}
	var jlog bytes.Buffer
	jc := exec.CommandContext(ctx, jaeger, "--config", cfgPath)
	jc.Stdout, jc.Stderr = &jlog, &jlog
	if err := jc.Start(); err != nil {
		t.Fatalf("start jaeger: %v", err)
	}
	defer func() {
		jc.Process.Kill()
		jc.Wait()
		if t.Failed() {
			t.Logf("jaeger's output:\n%s", jlog.String())
		}
	}()
	systest.WaitFor(t, ctx, "jaeger's query API", func() bool {
		resp, err := http.Get("http://" + queryAddr + "/api/services")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	})

	// The site the plugin fetches, allowed by an IP literal rule.
	seen := make(chan string, 1)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case seen <- r.Header.Get("traceparent"):
		default:
		}
		fmt.Fprint(w, "traced page")
	}))
	defer site.Close()
	host := strings.TrimPrefix(site.URL, "http://")
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "plugins.toml")
	if err := os.WriteFile(config, fmt.Appendf(nil, "[[plugin]]\nname = \"web\"\nsource = %q\nallowed_hosts = [%q]\ntimeout = \"30s\"\n",
		filepath.Join(root, "examples", "fetch"), host), 0o600); err != nil {
		t.Fatal(err)
	}

	// The client's own span, exported to the same Jaeger.
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpoint(otlpAddr), otlptracehttp.WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	ctp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
		sdktrace.WithResource(resource.NewSchemaless(attribute.String("service.name", "test-client"))))
	defer ctp.Shutdown(context.Background())
	cctx, clientSpan := ctp.Tracer("test").Start(ctx, "tools/call web_fetch", trace.WithSpanKind(trace.SpanKindClient))
	meta := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(cctx, meta)

	cmd := exec.CommandContext(ctx, systest.Binary(t), "serve", "--config", config, "--no-watch", "--eager")
	var serr bytes.Buffer
	cmd.Stderr = &serr
	cmd.Env = append(os.Environ(), "OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=http://"+otlpAddr,
		"OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_SERVICE_NAME=mcphost-test", "OTEL_BSP_SCHEDULE_DELAY=100")
	client := mcp.NewClient(&mcp.Implementation{Name: "jaeger-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, serr.String())
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "web_fetch", Arguments: map[string]any{"url": site.URL + "/page"},
		Meta: mcp.Meta{"traceparent": meta.Get("traceparent")}})
	if err != nil || res.IsError {
		t.Fatalf("tools/call web_fetch: %v %+v\n%s", err, res, serr.String())
	}
	clientSpan.End()
	// Closing stdin ends serve, which must flush its spans on the way out.
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	traceID := clientSpan.SpanContext().TraceID().String()
	if got := <-seen; !strings.Contains(got, traceID) {
		t.Errorf("the fetched site got traceparent %q; want one of trace %s", got, traceID)
	}

	var tr jaegerTrace
	systest.WaitFor(t, ctx, "the trace in jaeger", func() bool {
		tr = getTrace(t, queryAddr, traceID)
		return tr.find("http_request GET") != nil && tr.find("tools/call web_fetch", "mcphost-test") != nil && tr.find("tools/call web_fetch", "test-client") != nil
	})
	t.Logf("trace %s in jaeger: %v", traceID, tr.names())
	client0 := tr.find("tools/call web_fetch", "test-client")
	server := tr.find("tools/call web_fetch", "mcphost-test")
	guest := tr.find("wasm call_tool")
	http0 := tr.find("http_request GET")
	for _, link := range []struct {
		child, parent *jaegerSpan
		what          string
	}{{server, client0, "server span under the client's"}, {guest, server, "guest call under the server span"}, {http0, guest, "http_request under the guest call"}} {
		if link.child == nil || link.parent == nil {
			t.Fatalf("%s: span missing; trace has %v", link.what, tr.names())
		}
		if got := link.child.parentID(); got != link.parent.SpanID {
			t.Errorf("%s: parent %s; want %s (%s)", link.what, got, link.parent.SpanID, link.parent.OperationName)
		}
	}
	for span, want := range map[*jaegerSpan]map[string]string{
		server: {"mcp.method.name": "tools/call", "gen_ai.tool.name": "web_fetch", "mcp.plugin": "web"},
		guest:  {"mcp.plugin": "web"},
		http0:  {"server.address": "127.0.0.1", "mcphost.egress.decision": "allowed", "http.response.status_code": "200"},
	} {
		for k, v := range want {
			if got := span.tag(k); got != v {
				t.Errorf("span %s: %s = %q; want %q", span.OperationName, k, got, v)
			}
		}
	}
}

// freeAddr returns a loopback address with a port free at the time.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// jaegerTrace is a trace as Jaeger's /api/traces/{id} returns it.
type jaegerTrace struct {
	Spans     []jaegerSpan `json:"spans"`
	Processes map[string]struct {
		ServiceName string `json:"serviceName"`
	} `json:"processes"`
}

type jaegerSpan struct {
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	ProcessID     string `json:"processID"`
	References    []struct {
		RefType string `json:"refType"`
		SpanID  string `json:"spanID"`
	} `json:"references"`
	Tags []struct {
		Key   string `json:"key"`
		Value any    `json:"value"`
	} `json:"tags"`
}

func (s *jaegerSpan) parentID() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

func (s *jaegerSpan) tag(k string) string {
	for _, t := range s.Tags {
		if t.Key == k {
			return fmt.Sprint(t.Value)
		}
	}
	return ""
}

// find returns the span named name (of service, when given), or nil.
func (tr *jaegerTrace) find(name string, service ...string) *jaegerSpan {
	for i := range tr.Spans {
		s := &tr.Spans[i]
		if s.OperationName == name && (len(service) == 0 || tr.Processes[s.ProcessID].ServiceName == service[0]) {
			return s
		}
	}
	return nil
}

func (tr *jaegerTrace) names() []string {
	var out []string
	for _, s := range tr.Spans {
		out = append(out, s.OperationName)
	}
	return out
}

func getTrace(t *testing.T, queryAddr, id string) jaegerTrace {
	t.Helper()
	resp, err := http.Get("http://" + queryAddr + "/api/traces/" + id)
	if err != nil {
		t.Fatalf("jaeger query: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusNotFound {
		return jaegerTrace{}
	}
	var r struct {
		Data []jaegerTrace `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("jaeger query: %s %s (%v)", resp.Status, body, err)
	}
	if len(r.Data) == 0 {
		return jaegerTrace{}
	}
	return r.Data[0]
}
