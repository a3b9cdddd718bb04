package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/plugins/config"
)

// FuzzGuestOutput feeds arbitrary bytes as the output of every export of
// two plugins (whose names collide, so renaming runs too): Build must not
// fail or panic, every exposed name must be valid, and calls must return
// either JSON of the right shape or an error.
func FuzzGuestOutput(f *testing.F) {
	f.Add([]byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"content":[]}`))
	f.Add([]byte(`{"tools":[{"name":"x y","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}}},"outputSchema":{"type":"object"}}],` +
		`"resources":[{"uri":"a://b","name":"n"}],"resourceTemplates":[{"uriTemplate":"a://{x}","name":"t"}],` +
		`"prompts":[{"name":"p"}],"content":[],"contents":[],"messages":[]}`))
	f.Add([]byte(`{"tools":[{"name":"r","inputSchema":{"type":"object","$ref":"#/$defs/x","$defs":{"x":{"$ref":"#/$defs/x"}}}}]}`))
	f.Add([]byte(`{"tools":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, out []byte) {
		ctx := context.Background()
		reply := func(context.Context, []byte) ([]byte, error) { return out, nil }
		exports := map[string]func(context.Context, []byte) ([]byte, error){}
		for _, e := range []string{abi.ExportListTools, abi.ExportCallTool, abi.ExportListResources, abi.ExportListResourceTemplates,
			abi.ExportReadResource, abi.ExportListPrompts, abi.ExportGetPrompt, abi.ExportComplete} {
			exports[e] = reply
		}
		empty := ""
		l := NewLoader(LoaderOptions{Logger: discard()})
		cfg := config.DefaultConfig()
		cfg.Plugins = []config.Spec{
			{Name: "a", Native: NativeModule(exports), ToolPrefix: &empty},
			{Name: "b", Native: NativeModule(exports), ToolPrefix: &empty},
		}
		g, err := l.Build(ctx, cfg, nil)
		if err != nil {
			t.Fatalf("Build: %v", err)
		}
		defer g.Close(ctx)
		for _, tl := range g.Tools {
			if !ValidToolName(tl.Name) || !json.Valid(tl.Raw) || g.Tool(tl.Name) != tl {
				t.Fatalf("tool %q: invalid name or raw %s", tl.Name, tl.Raw)
			}
			_ = tl.validateArguments(nil)
			_ = tl.validateStructured(json.RawMessage(`{}`))
			res, err := tl.Plugin.callTool(ctx, tl.Original, nil, abi.Context{}, false)
			var oe *OutputError
			switch {
			case err == nil && !json.Valid(res.JSON):
				t.Fatalf("call %s: got invalid JSON %q without an error", tl.Name, res.JSON)
			case err != nil && !errors.As(err, &oe):
				t.Fatalf("call %s: got %v; want an *OutputError", tl.Name, err)
			}
		}
		for _, p := range g.Prompts {
			if !json.Valid(p.Raw) || g.Prompt(p.Name) != p {
				t.Fatalf("prompt %q: raw %s", p.Name, p.Raw)
			}
		}
		for _, tpl := range g.Templates {
			_, _ = g.MatchTemplate(tpl.Def.URITemplate)
		}
	})
}
