package hosttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/abi/jsonscan"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/sandbox"
)

// Fixture is the fake plugin set the tests serve: plugin "test" (tools of
// every behaviour, resources, templates, prompts, completion) and plugin
// "other" (one tool and one prompt, no complete export).
type Fixture struct {
	// slow tool: signals started, then waits for release or its ctx.
	Started   chan struct{}
	Release   chan struct{}
	Cancelled chan error
	// peerErr receives the error of the "ask" tool's Peer.Request.
	PeerErr chan error
}

func NewFixture() *Fixture {
	return &Fixture{
		Started:   make(chan struct{}, 16),
		Release:   make(chan struct{}),
		Cancelled: make(chan error, 16),
		PeerErr:   make(chan error, 16),
	}
}

// Native is one export of a native module.
type Native = func(ctx context.Context, in []byte) ([]byte, error)

// Input decodes an export's input envelope.
func Input(in []byte) (req json.RawMessage, cc abi.Context) {
	var env abi.Input
	if err := json.Unmarshal(in, &env); err != nil {
		panic(err)
	}
	return env.Request, env.Context
}

// Text is a CallToolResult of one text block.
func Text(s string) []byte {
	b, _ := json.Marshal(abi.CallToolResult{Content: []abi.Content{abi.TextContent(s)}})
	return b
}

const testTools = `{"tools":[
 {"name":"echo","title":"Echo","description":"Echoes msg.","inputSchema":{"type":"object","properties":{"msg":{"type":"string","title":"Message"}},"required":["msg"]},"annotations":{"title":"Echo!","readOnlyHint":true},"icons":[{"src":"data:image/png;base64,AA=="}],"_meta":{"x":1}},
 {"name":"weather","title":"Weather","inputSchema":{"type":"object","properties":{"bad":{"type":"boolean"}}},"outputSchema":{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}},
 {"name":"slow","inputSchema":{"type":"object"}},
 {"name":"fail","inputSchema":{"type":"object"}},
 {"name":"trap","inputSchema":{"type":"object"}},
 {"name":"media","inputSchema":{"type":"object"}},
 {"name":"progress","inputSchema":{"type":"object"}},
 {"name":"log","inputSchema":{"type":"object"}},
 {"name":"ask","inputSchema":{"type":"object","properties":{"method":{"type":"string"},"params":{}}}},
 {"name":"panic_host","inputSchema":{"type":"object"}}
]}`

const MediaResult = `{"content":[` +
	`{"type":"text","text":"hi","annotations":{"audience":["user"],"lastModified":"2025-01-01T00:00:00Z"}},` +
	`{"type":"image","data":"AA==","mimeType":"image/png"},` +
	`{"type":"audio","data":"AA==","mimeType":"audio/wav"},` +
	`{"type":"resource_link","uri":"test://readme","name":"readme","description":"The readme","icons":[{"src":"data:x"}]},` +
	`{"type":"resource","resource":{"uri":"test://readme","text":"Read me."}}` +
	`],"structuredContent":{"n":1},"_meta":{"m":true}}`

func (fx *Fixture) testTool(ctx context.Context, in []byte) ([]byte, error) {
	req, _ := Input(in)
	var p struct {
		Name      string `json:"name"`
		Arguments struct {
			Msg    string          `json:"msg"`
			Bad    bool            `json:"bad"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		} `json:"arguments"`
	}
	if err := json.Unmarshal(req, &p); err != nil {
		return nil, err
	}
	peer := sandbox.PeerFrom(ctx)
	switch p.Name {
	case "echo":
		return Text(p.Arguments.Msg), nil
	case "weather":
		if p.Arguments.Bad {
			return []byte(`{"content":[{"type":"text","text":"{\"temp\":\"hot\"}"}],"structuredContent":{"temp":"hot"}}`), nil
		}
		return []byte(`{"content":[{"type":"text","text":"{\"temp\":21}"}],"structuredContent":{"temp":21}}`), nil
	case "slow":
		fx.Started <- struct{}{}
		select {
		case <-fx.Release:
			return Text("done"), nil
		case <-ctx.Done():
			fx.Cancelled <- ctx.Err()
			return nil, ctx.Err()
		}
	case "fail":
		return nil, &sandbox.CallError{Module: "test", Export: "call_tool", Kind: sandbox.KindTimeout, Detail: "call exceeded 5s"}
	case "trap":
		panic("boom")
	case "media":
		return []byte(MediaResult), nil
	case "progress":
		for i := 1; i <= 2; i++ {
			if err := peer.Notify(ctx, "notifications/progress", json.RawMessage(fmt.Sprintf(`{"progress":%d,"total":2,"message":"step %d"}`, i, i))); err != nil {
				return nil, err
			}
		}
		return Text("progressed"), nil
	case "log":
		for _, l := range []string{"debug", "info", "error"} {
			if err := peer.Notify(ctx, "notifications/message", json.RawMessage(`{"level":"`+l+`","logger":"test","data":"at `+l+`"}`)); err != nil {
				return nil, err
			}
		}
		return Text("logged"), nil
	case "ask":
		res, err := peer.Request(ctx, p.Arguments.Method, p.Arguments.Params)
		fx.PeerErr <- err
		if err != nil {
			return nil, err
		}
		return Text(string(res)), nil
	case "panic_host":
		panic(errors.New("host-side bug"))
	}
	return nil, fmt.Errorf("no tool %q", p.Name)
}

// TestExports are the exports of plugin "test".
func (fx *Fixture) TestExports() map[string]Native {
	return map[string]Native{
		abi.ExportListTools: func(context.Context, []byte) ([]byte, error) { return []byte(testTools), nil },
		abi.ExportCallTool:  fx.testTool,
		abi.ExportListResources: func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"resources":[{"uri":"test://readme","name":"readme","title":"Read me","mimeType":"text/plain","annotations":{"priority":0.5,"lastModified":"2025-01-01T00:00:00Z"}},{"uri":"test://timeout","name":"timeout"}]}`), nil
		},
		abi.ExportListResourceTemplates: func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"resourceTemplates":[{"uriTemplate":"test://items/{id}","name":"item","title":"Item","icons":[{"src":"data:x"}]}]}`), nil
		},
		abi.ExportReadResource: func(_ context.Context, in []byte) ([]byte, error) {
			req, _ := Input(in)
			var p abi.ReadResourceParams
			json.Unmarshal(req, &p)
			switch {
			case p.URI == "test://timeout":
				return nil, &sandbox.CallError{Module: "test", Export: "read_resource", Kind: sandbox.KindTimeout, Detail: "call exceeded 5s"}
			case p.URI == "test://readme":
				return []byte(`{"contents":[{"uri":"test://readme","mimeType":"text/plain","text":"Read me."}]}`), nil
			case p.URI == "test://items/missing": // as the guest SDK reports an unknown URI
				return nil, &sandbox.CallError{Module: "test", Export: "read_resource", Kind: sandbox.KindGuestError,
					Detail: "read test://items/missing: " + abi.ResourceNotFound + ": test://items/missing"}
			case strings.HasPrefix(p.URI, "test://items/"):
				return json.Marshal(abi.ReadResourceResult{Contents: []abi.ResourceContents{{URI: p.URI, Text: "item " + strings.TrimPrefix(p.URI, "test://items/")}}})
			}
			return nil, fmt.Errorf("no resource %q", p.URI)
		},
		abi.ExportListPrompts: func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"prompts":[{"name":"greet","title":"Greeting","description":"Greets someone.","arguments":[{"name":"name","title":"Name","required":true},{"name":"mood"}]}]}`), nil
		},
		abi.ExportGetPrompt: func(_ context.Context, in []byte) ([]byte, error) {
			req, _ := Input(in)
			var p abi.GetPromptParams
			json.Unmarshal(req, &p)
			return []byte(`{"messages":[{"role":"user","content":{"type":"text","text":"Hello, ` + p.Arguments["name"] + `!"}},` +
				`{"role":"assistant","content":{"type":"resource_link","uri":"test://readme","name":"readme"}}]}`), nil
		},
		abi.ExportComplete: func(_ context.Context, in []byte) ([]byte, error) {
			req, _ := Input(in)
			var p abi.CompleteParams
			json.Unmarshal(req, &p)
			var vals []string
			for _, v := range []string{"alice", "albert", "bob"} {
				if strings.HasPrefix(v, p.Argument.Value) {
					vals = append(vals, v)
				}
			}
			return json.Marshal(abi.CompleteResult{Completion: abi.Completion{Values: append(vals, p.Ref.Type)}})
		},
	}
}

// OtherExports are the exports of plugin "other".
func OtherExports() map[string]Native {
	return map[string]Native{
		abi.ExportListTools: func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`), nil
		},
		abi.ExportCallTool: func(context.Context, []byte) ([]byte, error) { return Text("other echo"), nil },
		abi.ExportListPrompts: func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"prompts":[{"name":"hello"}]}`), nil
		},
		abi.ExportGetPrompt: func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"messages":[{"role":"user","content":{"type":"text","text":"hello"}}]}`), nil
		},
	}
}

// EchoExports is the benchmark's plugin: one tool that returns its
// arguments as text. It reads its input with the package's own scanner, so
// the benchmark measures the server rather than the fake plugin's JSON.
func EchoExports() map[string]Native {
	return map[string]Native{
		abi.ExportListTools: func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"msg":{"type":"string"}}}}]}`), nil
		},
		abi.ExportCallTool: func(_ context.Context, in []byte) ([]byte, error) {
			args := jsonrpc.Member(jsonrpc.Member(in, "request"), "arguments")
			out := append(make([]byte, 0, 64+len(args)), `{"content":[{"type":"text","text":`...)
			out = jsonscan.AppendString(out, string(args))
			return append(out, `}]}`...), nil
		},
	}
}

var QuietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// LoadRegistry builds a generation of the named plugin sets ("test",
// "echo"; "" for none) and swaps it into a new registry, so Ready is
// closed.
func LoadRegistry(t testing.TB, fx *Fixture, set string) *plugins.Registry {
	t.Helper()
	cfg := config.DefaultConfig()
	switch set {
	case "test":
		cfg.Plugins = []config.Spec{
			{Name: "test", Native: plugins.NativeModule(fx.TestExports())},
			{Name: "other", Native: plugins.NativeModule(OtherExports())},
		}
	case "tasks": // "test", with test_progress and test_slow run as tasks
		cfg.Plugins = []config.Spec{
			{Name: "test", Native: plugins.NativeModule(fx.TestExports()), TaskTools: []string{"progress", "slow"}},
		}
	case "echo":
		cfg.Plugins = []config.Spec{{Name: "echo", Native: plugins.NativeModule(EchoExports())}}
	case "":
	default:
		t.Fatalf("unknown plugin set %q", set)
	}
	g, err := plugins.NewLoader(plugins.LoaderOptions{Logger: QuietLog}).Build(context.Background(), cfg, nil)
	if err != nil {
		t.Fatalf("build plugins: %v", err)
	}
	if len(g.Failures) > 0 {
		t.Fatalf("plugins failed: %v", g.Failures)
	}
	reg := plugins.NewRegistry()
	reg.Swap(context.Background(), g)
	t.Cleanup(func() { reg.Close(context.Background()) })
	return reg
}

// BuildGeneration builds a generation of specs, failing t on any error.
func BuildGeneration(t testing.TB, specs ...config.Spec) *plugins.Generation {
	t.Helper()
	cfg := config.DefaultConfig()
	cfg.Plugins = specs
	g, err := plugins.NewLoader(plugins.LoaderOptions{Logger: QuietLog}).Build(context.Background(), cfg, nil)
	if err != nil || len(g.Failures) > 0 {
		t.Fatalf("build: %v %v", err, g.Failures)
	}
	return g
}

// Guard bounds every wait, so a bug fails the test instead of hanging it.
// It is never used to let time pass: tests wait on messages and channels.
const Guard = 20 * time.Second

// Recv returns the next value from ch, or fails t after Guard.
func Recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(Guard):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}
