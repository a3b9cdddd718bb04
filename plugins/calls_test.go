package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sandbox"
)

type handler = func(context.Context, []byte) ([]byte, error)

func reply(s string) handler {
	return func(context.Context, []byte) ([]byte, error) { return []byte(s), nil }
}

func TestPluginCalls(t *testing.T) {
	ctx := context.Background()
	m := fake{
		tools:   []string{tool("echo")},
		prompts: []string{prompt("greet")},
		exports: map[string]handler{
			abi.ExportReadResource:       reply(`{"contents":[{"uri":"mem://x","text":"hi"}]}`),
			abi.ExportGetPrompt:          reply(`{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`),
			abi.ExportComplete:           reply(`{"completion":{"values":["a"]}}`),
			abi.ExportOnRootsListChanged: reply(`{}`),
		},
	}.module()
	l := NewLoader(LoaderOptions{Logger: discard()})
	g := build(t, l, nil, native("p", m))
	defer g.Close(ctx)
	p := g.Plugin("p")
	cc := abi.Context{ID: json.RawMessage(`"req-1"`), Meta: json.RawMessage(`{"progressToken":5}`), ProtocolVersion: "2025-11-25"}

	tests := []struct {
		name      string
		call      func() (json.RawMessage, error)
		export    string
		wantInput string
	}{
		{"call_tool", func() (json.RawMessage, error) {
			return g.Tool("p_echo").Run(ctx, nil, json.RawMessage(`{"n":12345678901234567890}`), cc)
		}, abi.ExportCallTool,
			`{"request":{"name":"echo","arguments":{"n":12345678901234567890}},"context":{"id":"req-1","_meta":{"progressToken":5},"protocolVersion":"2025-11-25","plugin":"p"}}`},
		{"call_tool without arguments", func() (json.RawMessage, error) {
			res, err := p.callTool(ctx, "echo", nil, abi.Context{}, false)
			return res.JSON, err
		}, abi.ExportCallTool, `{"request":{"name":"echo"},"context":{"id":"mcphost/internal","_meta":{},"plugin":"p"}}`},
		{"read_resource", func() (json.RawMessage, error) {
			return p.readResource(ctx, "mem://x", cc)
		}, abi.ExportReadResource,
			`{"request":{"uri":"mem://x"},"context":{"id":"req-1","_meta":{"progressToken":5},"protocolVersion":"2025-11-25","plugin":"p"}}`},
		{"get_prompt", func() (json.RawMessage, error) {
			return g.Prompt("greet").Render(ctx, nil, map[string]string{"who": "ann"}, abi.Context{})
		}, abi.ExportGetPrompt, `{"request":{"name":"greet","arguments":{"who":"ann"}},"context":{"id":"mcphost/internal","_meta":{},"plugin":"p"}}`},
		{"complete strips ref/", func() (json.RawMessage, error) {
			return p.complete(ctx, abi.CompleteParams{Ref: abi.CompleteRef{Type: "ref/prompt", Name: "greet"},
				Argument: abi.CompleteArgument{Name: "who", Value: "a"}}, abi.Context{})
		}, abi.ExportComplete,
			`{"request":{"ref":{"type":"prompt","name":"greet"},"argument":{"name":"who","value":"a"}},"context":{"id":"mcphost/internal","_meta":{},"plugin":"p"}}`},
		{"client sent null _meta", func() (json.RawMessage, error) {
			res, err := p.callTool(ctx, "echo", nil, abi.Context{ID: json.RawMessage(`3`), Meta: json.RawMessage(`null`)}, false)
			return res.JSON, err
		}, abi.ExportCallTool, `{"request":{"name":"echo"},"context":{"id":3,"_meta":{},"plugin":"p"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := tt.call()
			if err != nil {
				t.Fatalf("got error %v", err)
			}
			if !json.Valid(out) {
				t.Errorf("output %s is not JSON", out)
			}
			if got := m.input(tt.export); got != tt.wantInput {
				t.Errorf("input:\n got %s\nwant %s", got, tt.wantInput)
			}
		})
	}
	// What hyper-mcp sends for a list, and for a notification (no id).
	if got, want := m.input(abi.ExportListTools), `{"context":{"id":"mcphost/internal","_meta":{},"plugin":"p"}}`; got != want {
		t.Errorf("list_tools input at load:\n got %s\nwant %s", got, want)
	}
	if err := p.rootsListChanged(ctx, abi.Context{ID: json.RawMessage(`9`)}); err != nil {
		t.Fatal(err)
	}
	if got, want := m.input(abi.ExportOnRootsListChanged), `{"context":{"_meta":{},"plugin":"p"}}`; got != want {
		t.Errorf("on_roots_list_changed input:\n got %s\nwant %s", got, want)
	}
}

func TestPluginCallErrors(t *testing.T) {
	ctx := context.Background()
	out := func(s string) fake {
		return fake{tools: []string{tool("t")}, exports: map[string]handler{abi.ExportCallTool: reply(s)}}
	}
	tests := []struct {
		name string
		f    fake
		call func(p *Plugin) error
		want string
		is   []error
	}{
		{"invalid JSON", out(`{"content":[`), callT, `plugin "p": call_tool: bad output: invalid JSON: "{\"content\":["`, nil},
		{"not an object", out(`[1]`), callT, `plugin "p": call_tool: bad output: not a JSON object: "[1]"`, nil},
		{"null", out(`null`), callT, `plugin "p": call_tool: bad output: not a JSON object: null`, nil},
		{"no content", out(`{"isError":true}`), callT, `plugin "p": call_tool: bad output: missing "content"`, nil},
		{"content not an array", out(`{"content":"x"}`), callT, `plugin "p": call_tool: bad output: "content" is not an array`, nil},
		{"trailing data", out(`{"content":[]} {}`), callT, `plugin "p": call_tool: bad output: invalid JSON`, nil},
		{"guest error", fake{tools: []string{tool("t")}, exports: map[string]handler{
			abi.ExportCallTool: func(context.Context, []byte) ([]byte, error) { return nil, errBoom }}},
			callT, "native: call_tool: guest error: boom", []error{sandbox.ErrGuest, errBoom}},
		{"unknown tool", out(`{}`), func(p *Plugin) error {
			_, err := p.callTool(ctx, "nope", nil, abi.Context{}, false)
			return err
		}, `plugin "p": tool "nope": not found`, []error{ErrNotFound}},
		{"missing call_tool", fake{tools: []string{tool("t")}, exports: map[string]handler{abi.ExportCallTool: nil}},
			callT, `plugin "p" does not export "call_tool"`, []error{ErrNotSupported, sandbox.ErrMissingExport}},
		{"missing get_prompt", fake{prompts: []string{prompt("q")}}, func(p *Plugin) error {
			_, err := p.getPrompt(ctx, "q", nil, abi.Context{})
			return err
		}, `plugin "p" does not export "get_prompt"`, []error{ErrNotSupported}},
		{"completion not an object", fake{exports: map[string]handler{abi.ExportComplete: reply(`{"completion":[]}`)}},
			func(p *Plugin) error {
				_, err := p.complete(ctx, abi.CompleteParams{}, abi.Context{})
				return err
			}, `plugin "p": complete: bad output: "completion" is not an object`, nil},
		{"contents missing", fake{exports: map[string]handler{abi.ExportReadResource: reply(`{"contents":null}`)}},
			func(p *Plugin) error {
				_, err := p.readResource(ctx, "x://y", abi.Context{})
				return err
			}, `plugin "p": read_resource: bad output: "contents" is not an array`, nil},
		{"messages missing", fake{prompts: []string{prompt("q")}, exports: map[string]handler{abi.ExportGetPrompt: reply(`{}`)}},
			func(p *Plugin) error {
				_, err := p.getPrompt(ctx, "q", nil, abi.Context{})
				return err
			}, `plugin "p": get_prompt: bad output: missing "messages"`, nil},
		{"invalid arguments JSON", out(`{"content":[]}`), func(p *Plugin) error {
			_, err := p.callTool(ctx, "t", json.RawMessage(`{bad`), abi.Context{}, false)
			return err
		}, `plugin "p": encode input:`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := build(t, NewLoader(LoaderOptions{Logger: discard()}), nil, native("p", tt.f.module()))
			defer g.Close(ctx)
			if len(g.Failures) > 0 {
				t.Fatalf("load failed: %v", g.Failures)
			}
			err := tt.call(g.Plugin("p"))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("got %v; want an error starting %q", err, tt.want)
			}
			var oe *OutputError
			if strings.Contains(tt.want, "bad output") && !errors.As(err, &oe) {
				t.Errorf("got %T; want *OutputError", err)
			}
			for _, target := range tt.is {
				if !errors.Is(err, target) {
					t.Errorf("errors.Is(%v, %v) = false; want true", err, target)
				}
			}
		})
	}
}

func callT(p *Plugin) error {
	_, err := p.callTool(context.Background(), "t", nil, abi.Context{}, false)
	return err
}

func TestValidateArguments(t *testing.T) {
	schema := `{"type":"object","properties":{
		"n":{"type":"integer","maximum":10},
		"big":{"const":12345678901234567890},
		"s":{"type":"string","minLength":2},
		"name":{"type":"string"},
		"opt":{"type":"object","properties":{"depth":{"type":"integer"}},"additionalProperties":false}},
		"required":["s"],"additionalProperties":false}`
	out := `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`
	m := fake{tools: []string{`{"name":"v","inputSchema":` + schema + `,"outputSchema":` + out + `}`, tool("free")}}.module()
	g := build(t, NewLoader(LoaderOptions{Logger: discard()}), nil, native("p", m))
	defer g.Close(context.Background())
	v, free := g.Tool("p_v"), g.Tool("p_free")
	if v == nil || free == nil {
		t.Fatalf("tools: got %q; want p_v and p_free", toolNames(g))
	}
	args := []struct {
		args string
		want string // "" for valid
	}{
		{`{"s":"ab"}`, ""},
		{`{"s":"ab","n":3}`, ""},
		{`{"s":"ab","big":12345678901234567890}`, ""},
		{`{"s":"ab","big":12345678901234567891}`, `tool "p_v": invalid arguments: at '/big': value must be 12345678901234567890`},
		{`{"s":"ab","n":11}`, `tool "p_v": invalid arguments: at '/n': maximum: got 11, want 10`},
		{`{"n":1.5}`, `tool "p_v": invalid arguments: at '': missing property 's'; at '/n': got number, want integer`},
		{``, `tool "p_v": invalid arguments: at '': missing property 's'`},
		{`null`, `tool "p_v": invalid arguments: at '': missing property 's'`},
		{`[]`, `tool "p_v": invalid arguments: at '': got array, want object`},
		{`{"s":`, `tool "p_v": invalid arguments: invalid JSON: unexpected EOF`},
		// An argument the schema does not allow names the closest declared one.
		{`{"s":"ab","nme":"a"}`, `tool "p_v": invalid arguments: at '': additional property "nme" not allowed (did you mean "name"?)`},
		{`{"s":"ab","zzzzzz":1}`, `tool "p_v": invalid arguments: at '': additional property "zzzzzz" not allowed`},
		{`{"s":"ab","opt":{"dept":1}}`, `tool "p_v": invalid arguments: at '/opt': additional property "dept" not allowed (did you mean "depth"?)`},
	}
	for _, tt := range args {
		err := v.validateArguments(json.RawMessage(tt.args))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("validateArguments(%s):\n got %q\nwant %q", tt.args, got, tt.want)
		}
		var ve *ValidationError
		if err != nil && !errors.As(err, &ve) {
			t.Errorf("validateArguments(%s): got %T; want *ValidationError", tt.args, err)
		}
	}
	if err := free.validateArguments(nil); err != nil {
		t.Errorf("free.validateArguments(nil) = %v; want nil", err)
	}

	structured := []struct {
		tool *Tool
		v    string
		want string
	}{
		{v, `{"ok":true}`, ""},
		{v, `{"ok":1}`, `tool "p_v": invalid structuredContent: at '/ok': got number, want boolean`},
		{v, ``, `tool "p_v": invalid structuredContent: missing: the tool declares an outputSchema`},
		{free, ``, ""},
		{free, `{"anything":1}`, ""},
	}
	for _, tt := range structured {
		err := tt.tool.validateStructured(json.RawMessage(tt.v))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s.validateStructured(%s):\n got %q\nwant %q", tt.tool.Name, tt.v, got, tt.want)
		}
	}
}

func TestNativeModule(t *testing.T) {
	m := NativeModule(map[string]handler{
		"ok":    reply("out"),
		"fail":  func(context.Context, []byte) ([]byte, error) { return nil, errBoom },
		"panic": func(context.Context, []byte) ([]byte, error) { panic("bad") },
		"typed": func(context.Context, []byte) ([]byte, error) {
			return nil, &sandbox.CallError{Module: "m", Export: "typed", Kind: sandbox.KindOutOfMemory}
		},
	})
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		ctx    context.Context
		export string
		out    string
		kind   sandbox.Kind
	}{
		{context.Background(), "ok", "out", 0},
		{context.Background(), "fail", "", sandbox.KindGuestError},
		{context.Background(), "panic", "", sandbox.KindTrap},
		{context.Background(), "typed", "", sandbox.KindOutOfMemory},
		{context.Background(), "nope", "", sandbox.KindMissingExport},
		{canceled, "ok", "", sandbox.KindCanceled},
	}
	for _, tt := range tests {
		out, err := m.Call(tt.ctx, tt.export, nil)
		var ce *sandbox.CallError
		switch {
		case tt.kind == 0 && (err != nil || string(out) != tt.out):
			t.Errorf("Call(%s) = %q, %v; want %q", tt.export, out, err, tt.out)
		case tt.kind != 0 && (!errors.As(err, &ce) || ce.Kind != tt.kind):
			t.Errorf("Call(%s) error = %v; want kind %v", tt.export, err, tt.kind)
		}
	}
	if got, want := m.(exporter).Exports(), []string{"fail", "ok", "panic", "typed"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Exports() = %q; want %q", got, want)
	}
	if !m.HasExport("ok") || m.HasExport("nope") {
		t.Errorf("HasExport: got ok=%v nope=%v; want true false", m.HasExport("ok"), m.HasExport("nope"))
	}
	_ = m.Close(context.Background())
	var ce *sandbox.CallError
	if _, err := m.Call(context.Background(), "ok", nil); !errors.As(err, &ce) || ce.Kind != sandbox.KindClosed {
		t.Errorf("Call after Close: got %v; want KindClosed", err)
	}
}

func TestAdditionalProperties(t *testing.T) {
	known := []string{"depth", "name"}
	for _, tc := range []struct {
		props []string
		want  string
	}{
		{[]string{"nme"}, `additional property "nme" not allowed (did you mean "name"?)`},
		{[]string{"zzzzzz"}, `additional property "zzzzzz" not allowed`},
		{[]string{"nme", "zzzzzz", "dept"}, `additional properties "nme", "zzzzzz", "dept" not allowed (did you mean "name" for "nme", "depth" for "dept"?)`},
	} {
		if got := additionalProperties(tc.props, known); got != tc.want {
			t.Errorf("additionalProperties(%q):\n got %s\nwant %s", tc.props, got, tc.want)
		}
	}
}
