package streamable

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
)

// The official MCP Go SDK client as a judge of the HTTP transports: it
// negotiates, streams, resumes and answers server requests its own way.

func sdkText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) == 0 {
		t.Fatalf("empty result %+v", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("got %T; want text content", res.Content[0])
	}
	return tc.Text
}

// TestGoSDKStreamableHTTP drives both eras with the SDK client: the
// 2025-11-25 handshake (session, GET stream, setLevel, real sampling
// requests) and the stateless 2026-07-28 protocol (discover, per-request
// _meta, input_required for sampling, subscriptions/listen).
func TestGoSDKStreamableHTTP(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) { testGoSDKStreamableHTTP(t, version) })
	}
}

func testGoSDKStreamableHTTP(t *testing.T, version string) {
	reg := loadRegistry(t, newFixture(), "test")
	srv := host.New(reg, host.Options{Logger: quietLog})
	defer srv.Close()
	ht := startHTTP(t, srv, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()

	logs := make(chan string, 16)
	progress := make(chan float64, 16)
	changed := make(chan struct{}, 4)
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-judge", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			logs <- string(r.Params.Level) + " " + r.Params.Data.(string)
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			progress <- r.Params.Progress
		},
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "judge", Content: &mcp.TextContent{Text: "sampled"}}, nil
		},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ht.url, HTTPClient: ht.ts.Client()},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != version {
		t.Errorf("negotiated %s; want %s", v, version)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list: %v %+v", err, tools)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_echo", Arguments: map[string]any{"msg": "hi"}})
	if err != nil || sdkText(t, res) != "hi" {
		t.Fatalf("echo: %v %+v", err, res)
	}
	logCall := &mcp.CallToolParams{Name: "test_log"}
	if version == "2025-11-25" {
		if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
			t.Fatal(err)
		}
	} else {
		logCall.Meta = mcp.Meta{"io.modelcontextprotocol/logLevel": "info"}
	}
	if _, err := cs.CallTool(ctx, logCall); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"info at info", "error at error"} {
		if got := recv(t, logs, "a log message"); got != want {
			t.Errorf("log: got %q; want %q", got, want)
		}
	}
	p := &mcp.CallToolParams{Name: "test_progress"}
	p.SetProgressToken("tok")
	if _, err := cs.CallTool(ctx, p); err != nil {
		t.Fatal(err)
	}
	for _, want := range []float64{1, 2} {
		if got := recv(t, progress, "a progress notification"); got != want {
			t.Errorf("progress: got %v; want %v", got, want)
		}
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_ask", Arguments: map[string]any{
		"method": "sampling/createMessage", "params": map[string]any{"messages": []any{}, "maxTokens": 1}}})
	if err != nil || !strings.Contains(sdkText(t, res), "sampled") {
		t.Errorf("sampling: %v %+v", err, res)
	}
	g := buildGeneration(t, config.Spec{Name: "echo", Native: plugins.NativeModule(echoExports())})
	reg.Swap(context.Background(), g)
	recv(t, changed, "tools/list_changed (GET stream or subscriptions/listen)")
}

// TestGoSDKResumesPolledStream: with PollAfter the server closes the
// call's stream at once; the SDK client reconnects with Last-Event-ID
// and gets the result.
func TestGoSDKResumesPolledStream(t *testing.T) {
	fx := newFixture()
	srv := newServer(t, fx, host.Options{})
	ht := startHTTP(t, srv, Options{PollAfter: time.Nanosecond, Retry: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-judge", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ht.url, HTTPClient: ht.ts.Client(), DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	go func() {
		<-fx.Started
		fx.Release <- struct{}{}
	}()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_slow"})
	if err != nil || sdkText(t, res) != "done" {
		t.Fatalf("slow call across a poll: %v %+v", err, res)
	}
}

func TestGoSDKLegacySSE(t *testing.T) {
	srv := newServer(t, newFixture(), host.Options{})
	ht := startHTTP(t, srv, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-judge", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.SSEClientTransport{Endpoint: ht.ts.URL + "/sse", HTTPClient: ht.ts.Client()}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_echo", Arguments: map[string]any{"msg": "legacy"}})
	if err != nil || sdkText(t, res) != "legacy" {
		t.Fatalf("echo over HTTP+SSE: %v %+v", err, res)
	}
}
