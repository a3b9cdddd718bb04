package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/abi/jsonscan"
	"github.com/mcphost/mcphost/sandbox/internal/extism"
)

// wireCaller is a plugin written in Go at the byte level of the Extism
// ABI: each export gets its input and returns its output. It keeps the
// last input of each export.
type wireCaller struct {
	exports map[string]func(in []byte) []byte
	mu      sync.Mutex
	inputs  map[string]string
}

func (w *wireCaller) HasExport(name string) bool { _, ok := w.exports[name]; return ok }

func (w *wireCaller) Call(_ context.Context, export string, input []byte) ([]byte, error) {
	f, ok := w.exports[export]
	if !ok {
		return nil, &CallError{Module: "wire", Export: export, Kind: KindMissingExport}
	}
	w.mu.Lock()
	if w.inputs == nil {
		w.inputs = map[string]string{}
	}
	w.inputs[export] = string(input)
	w.mu.Unlock()
	return f(input), nil
}

func (w *wireCaller) input(export string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.inputs[export]
}

// greetResult is what the kinds component's greet and greet-extism.c
// answer: the greeting as text and as structuredContent.
func greetResult(name string) []byte {
	s := string(jsonscan.AppendString(nil, "¡hola, "+name+"!"))
	return []byte(`{"content":[{"type":"text","text":` + s + `}],"structuredContent":{"result":` + s + `}}`)
}

const greetTool = `{"name":"greet","inputSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`

// greetV1 is an mcp.run servlet with the greet tool.
func greetV1() *wireCaller {
	return &wireCaller{exports: map[string]func([]byte) []byte{
		abi.ExportDescribe: func([]byte) []byte { return []byte(`{"tools":[` + greetTool + `]}`) },
		abi.ExportCall: func(in []byte) []byte {
			var v abi.V1CallInput
			var args struct{ Name string }
			if json.Unmarshal(in, &v) != nil || json.Unmarshal(v.Params.Arguments, &args) != nil {
				return []byte(`{"content":[{"type":"text","text":"bad input"}],"isError":true}`)
			}
			return greetResult(args.Name)
		},
	}}
}

// TestGuestKinds asks the same questions of the three kinds of guest, each
// with the greet tool: an Extism v1 servlet (in Go), an Extism v2 plugin
// (greet-extism.c) and a component (kinds). Each answers the call with
// the same result, from what its own wire carried.
func TestGuestKinds(t *testing.T) {
	ctx := context.Background()
	v1 := greetV1()
	kinds := map[string]Caller{"v1": v1}
	for kind, file := range map[string]string{"v2": "greet-extism", "component": "kinds"} {
		m, err := testEngine.Load(ctx, kind, componentWasm(t, file), Limits{Instances: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close(context.Background()) })
		kinds[kind] = m
	}
	cc := abi.Context{ID: json.RawMessage(`7`), ProtocolVersion: "2025-11-25"}
	for _, tt := range []struct {
		kind  string
		abi   int
		tools int
	}{
		{"v1", 1, 1},
		{"v2", 2, 1},
		{"component", 2, 19},
	} {
		t.Run(tt.kind, func(t *testing.T) {
			g, err := NewGuest(kinds[tt.kind], "p")
			if err != nil {
				t.Fatal(err)
			}
			if g.ABI() != tt.abi {
				t.Errorf("ABI %d, want %d", g.ABI(), tt.abi)
			}
			ls, err := g.Lists(ctx)
			if err != nil || len(ls.Tools) != tt.tools {
				t.Fatalf("Lists: %d tools, %v; want %d", len(ls.Tools), err, tt.tools)
			}
			ref := toolRef(t, g, "greet")
			out, err := g.CallTool(ctx, ref, json.RawMessage(`{"name":"wörld \"✓\""}`), cc)
			if err != nil {
				t.Fatal(err)
			}
			if want := greetResult(`wörld "✓"`); !sameJSON(out.JSON, want) || out.IsError {
				t.Errorf("CallTool: %s (isError %v)\nwant %s", out.JSON, out.IsError, want)
			}
			// A stale index still finds the tool by its name, or none.
			if out, err := g.CallTool(ctx, ToolRef{Name: "greet", Index: ref.Index + 1}, json.RawMessage(`{"name":"x"}`), cc); err != nil || !sameJSON(out.JSON, greetResult("x")) {
				t.Errorf("CallTool with a stale index: %s, %v", out.JSON, err)
			}
			// Questions the plugin has no export for.
			_, err = g.ReadResource(ctx, "x://y", cc)
			var ue *UnsupportedError
			if !errors.As(err, &ue) || ue.Plugin != "p" || ue.Export != abi.ExportReadResource ||
				!errors.Is(err, ErrNotSupported) || !errors.Is(err, ErrMissingExport) {
				t.Errorf("ReadResource: %v; want an UnsupportedError for read_resource", err)
			}
			if _, err := g.GetPrompt(ctx, "q", nil, cc); !errors.Is(err, ErrNotSupported) {
				t.Errorf("GetPrompt: %v; want ErrNotSupported", err)
			}
			if _, err := g.Complete(ctx, abi.CompleteParams{}, cc); !errors.Is(err, ErrNotSupported) {
				t.Errorf("Complete: %v; want ErrNotSupported", err)
			}
			if err := g.RootsListChanged(ctx, cc); err != nil {
				t.Errorf("RootsListChanged without a listener: %v", err)
			}
		})
	}
	if got, want := v1.input(abi.ExportCall), `{"params":{"name":"greet","arguments":{"name":"x"}}}`; got != want {
		t.Errorf("v1 call input %s, want %s", got, want)
	}
}

// TestComponentGuestNoEnvelope checks that a component is reached only
// through its typed Guest: its module serves no Extism export at the byte
// level (so no envelope can reach it), and arguments that do not fit its
// WIT types, or a tool it does not have, are an error result made before
// any instance runs.
func TestComponentGuestNoEnvelope(t *testing.T) {
	ctx := context.Background()
	m, err := testEngine.Load(ctx, "kinds", componentWasm(t, "kinds"), Limits{Instances: 1, MaxInputBytes: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	envelope := []byte(`{"request":{"name":"greet","arguments":{"name":"x"}},"context":{}}`)
	if m.HasExport(abi.ExportCallTool) || m.HasExport(abi.ExportListTools) || len(m.Exports()) != 0 {
		t.Errorf("component exports %q; want none at the byte level", m.Exports())
	}
	if _, err := m.Call(ctx, abi.ExportCallTool, envelope); !errors.Is(err, ErrMissingExport) || !strings.Contains(err.Error(), "NewGuest") {
		t.Errorf("call_tool with an envelope: %v; want ErrMissingExport naming the Guest", err)
	}
	g, err := NewGuest(m, "kinds")
	if err != nil {
		t.Fatal(err)
	}
	before := m.Stats().Calls
	for _, tt := range []struct {
		ref  ToolRef
		args string
		want string
	}{
		{ToolRef{Name: "nope", Index: 0}, `{}`, `unknown tool "nope"`},
		{toolRef(t, g, "greet"), `{"name":3}`, `invalid arguments: name: want a string, got a number`},
		{toolRef(t, g, "greet"), `{"name":"a","x":1}`, `invalid arguments: : unknown member "x"`},
		{toolRef(t, g, "add"), `{"a":256,"b":0,"c":0,"d":0,"e":0}`, `invalid arguments: a: 256 is not an integer from 0 to 255`},
	} {
		out, err := g.CallTool(ctx, tt.ref, json.RawMessage(tt.args), abi.Context{})
		var res abi.CallToolResult
		if err != nil || json.Unmarshal(out.JSON, &res) != nil || !res.IsError || !out.IsError || len(res.Content) != 1 || res.Content[0].Text != tt.want {
			t.Errorf("%s(%s): %s (isError %v), %v; want the error result %q", tt.ref.Name, tt.args, out.JSON, out.IsError, err, tt.want)
		}
	}
	if n := m.Stats().Calls - before; n != 0 {
		t.Errorf("refused arguments ran %d calls on an instance; want none", n)
	}
	big := json.RawMessage(`{"name":"` + strings.Repeat("x", 2<<10) + `"}`)
	var ce *CallError
	if _, err := g.CallTool(ctx, toolRef(t, g, "greet"), big, abi.Context{}); !errors.As(err, &ce) || ce.Kind != KindBadInput || ce.Export != abi.ExportCallTool {
		t.Errorf("arguments over max_input_bytes: %v; want KindBadInput on call_tool", err)
	}
}

// TestExtismGuestUnknownABI refuses a module that is neither v1 (describe
// alone is not enough) nor v2, naming what it wants.
func TestExtismGuestUnknownABI(t *testing.T) {
	_, err := NewGuest(&wireCaller{exports: map[string]func([]byte) []byte{abi.ExportDescribe: nil}}, "p")
	if want := "unknown ABI: no known export (want list_tools, call_tool, … or describe and call)"; err == nil || err.Error() != want {
		t.Errorf("NewGuest: %v; want %q", err, want)
	}
}

// sameJSON reports whether a and b decode to the same value.
func sameJSON(a, b []byte) bool {
	var va, vb any
	return json.Unmarshal(a, &va) == nil && json.Unmarshal(b, &vb) == nil && reflect.DeepEqual(va, vb)
}

// TestExtismGuestCallFrame: a v2 guest that exports mcphost_call_tool_members
// gets tool calls there, as a CallFrame holding what the call_tool
// envelope's request and context would (the context filled and compacted
// alike) and the index of the arguments' members; one that exports only
// mcphost_call_tool gets the same frame without the index; one with
// neither gets the envelope, as every hyper-mcp plugin and every guest of
// an earlier SDK does. Errors name call_tool either way.
func TestExtismGuestCallFrame(t *testing.T) {
	ctx := context.Background()
	ok := []byte(`{"content":[]}`)
	newCaller := func(out []byte, frames ...string) *wireCaller {
		w := &wireCaller{exports: map[string]func([]byte) []byte{
			abi.ExportCallTool: func([]byte) []byte { return ok },
		}}
		for _, e := range frames {
			w.exports[e] = func([]byte) []byte { return out }
		}
		return w
	}
	cc := abi.Context{ID: json.RawMessage(`"r 1"`), Meta: json.RawMessage(`{ "progressToken": 5 }`), ProtocolVersion: "2025-11-25"}
	for _, tc := range []struct {
		name string
		args json.RawMessage
		cc   abi.Context
		want abi.CallFrame
	}{
		{"client request", json.RawMessage(`{"text": "hi"}`), cc, abi.CallFrame{Name: []byte("echo"), ID: []byte(`"r 1"`),
			Meta: []byte(`{"progressToken":5}`), ProtocolVersion: []byte("2025-11-25"), Plugin: []byte("p"), Arguments: []byte(`{"text": "hi"}`)}},
		{"no arguments, no context", json.RawMessage(" "), abi.Context{}, abi.CallFrame{Name: []byte("echo"),
			ID: []byte(`"mcphost/internal"`), Meta: []byte(`{}`), Plugin: []byte("p")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			members := tc.want
			members.Members = abi.AppendArgMembers(nil, tc.want.Arguments)
			for _, v := range []struct {
				exports []string // the frame exports the guest has
				to      string   // the one calls go to
				frame   string
			}{
				{[]string{abi.ExportCallToolMembers, abi.ExportCallToolFrame}, abi.ExportCallToolMembers, string(abi.AppendMembersFrame(nil, &members))},
				{[]string{abi.ExportCallToolFrame}, abi.ExportCallToolFrame, string(abi.AppendCallFrame(nil, &tc.want))},
			} {
				w := newCaller(ok, v.exports...)
				g, err := NewGuest(w, "p")
				if err != nil {
					t.Fatal(err)
				}
				if _, err := g.CallTool(ctx, ToolRef{Name: "echo"}, tc.args, tc.cc); err != nil {
					t.Fatal(err)
				}
				for _, e := range append(v.exports, abi.ExportCallTool) {
					if in := w.input(e); e != v.to && in != "" {
						t.Errorf("%s called with %q; want only %s", e, in, v.to)
					}
				}
				if got := w.input(v.to); got != v.frame {
					t.Errorf("%s: frame %q\nwant  %q", v.to, got, v.frame)
				}
			}
			old := newCaller(nil)
			g, err := NewGuest(old, "p")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := g.CallTool(ctx, ToolRef{Name: "echo"}, tc.args, tc.cc); err != nil || old.input(abi.ExportCallTool) == "" {
				t.Errorf("without a frame export: %v, call_tool input %q; want the envelope", err, old.input(abi.ExportCallTool))
			}
		})
	}
	g, err := NewGuest(newCaller([]byte(`{"content":{}}`), abi.ExportCallToolMembers), "p")
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.CallTool(ctx, ToolRef{Name: "echo"}, nil, cc)
	var oe *OutputError
	if !errors.As(err, &oe) || oe.Export != abi.ExportCallTool {
		t.Errorf("bad output through the frame: %v; want an OutputError naming %s", err, abi.ExportCallTool)
	}
	if _, err := g.CallTool(ctx, ToolRef{Name: "echo"}, nil, abi.Context{Meta: json.RawMessage(`{"a":`)}); err == nil {
		t.Error("invalid _meta framed")
	}
}

// TestExtismGuestResultFrame: a result frame from mcphost_call_tool_members
// reaches the host's caller as the JSON it stands for, isError and
// structured content found; a malformed one, or JSON longer than the
// guest's output may be, is an OutputError naming call_tool; and from
// mcphost_call_tool, which has no result frames, the same bytes are
// output that is not JSON.
func TestExtismGuestResultFrame(t *testing.T) {
	ctx := context.Background()
	res := &abi.CallToolResult{Content: []abi.Content{{Type: abi.ContentText, Text: "a \"b\""}}, StructuredContent: json.RawMessage(`{"n":1}`), IsError: true}
	frame, ok := abi.AppendResultFrame(nil, res)
	if !ok {
		t.Fatal("no frame")
	}
	const wantJSON = `{"content":[{"type":"text","text":"a \"b\""}],"structuredContent":{"n":1},"isError":true}`
	guest := func(export string, out []byte) Guest {
		g, err := NewGuest(&wireCaller{exports: map[string]func([]byte) []byte{
			abi.ExportCallTool: func([]byte) []byte { return []byte(`{"content":[]}`) },
			export:             func([]byte) []byte { return out },
		}}, "p")
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	r, err := guest(abi.ExportCallToolMembers, frame).CallTool(ctx, ToolRef{Name: "echo"}, nil, abi.Context{})
	if err != nil || string(r.JSON) != wantJSON || !r.IsError || string(r.Structured) != `{"n":1}` {
		t.Errorf("got %s (isError %v, structured %s), %v\nwant %s", r.JSON, r.IsError, r.Structured, err, wantJSON)
	}
	bounded := guest(abi.ExportCallToolMembers, frame).(*extism.V2)
	bounded.MaxOutput = len(wantJSON) - 1
	for _, tc := range []struct {
		name string
		g    Guest
	}{
		{"malformed", guest(abi.ExportCallToolMembers, frame[:len(frame)-1])},
		{"over the output bound", bounded},
		{"through mcphost_call_tool", guest(abi.ExportCallToolFrame, frame)},
	} {
		_, err := tc.g.CallTool(ctx, ToolRef{Name: "echo"}, nil, abi.Context{})
		var oe *OutputError
		if !errors.As(err, &oe) || oe.Export != abi.ExportCallTool {
			t.Errorf("%s: %v; want an OutputError naming %s", tc.name, err, abi.ExportCallTool)
		}
	}
}
