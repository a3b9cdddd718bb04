package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
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
			case err == nil && !json.Valid(res):
				t.Fatalf("call %s: got invalid JSON %q without an error", tl.Name, res)
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

// FuzzGrantsFile reads arbitrary bytes as plugins.grants.toml: a file
// that reads holds only grants that are whole (a plugin, one target, a
// valid access and code), and writing them back reads back the same.
func FuzzGrantsFile(f *testing.F) {
	f.Add([]byte("[[grant]]\nplugin = \"fetch\"\ncode = \"sha256:" + strings.Repeat("0", 64) + "\"\nsigner = \"key sha256:ab\"\nhost = \"a.example:443\"\ngranted = 2026-11-25T12:00:00Z\n"))
	f.Add([]byte("[[grant]]\nplugin = \"files\"\npath = \"/srv\"\naccess = \"write\"\ngranted = 2026-11-25T12:00:00Z\n"))
	f.Add([]byte("[[grant]]\nplugin = \"x\"\nhost = \"h:1\"\ncode = \"sha256:XYZ\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		file := filepath.Join(dir, GrantsFileName)
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
		list, err := readGrants(file)
		if err != nil {
			return
		}
		for _, gr := range list {
			if gr.Plugin == "" || (gr.Host == "") == (gr.Path == "") || gr.Code != "" && !validDigest(gr.Code) ||
				gr.Path != "" && gr.Access != AccessRead && gr.Access != AccessWrite {
				t.Fatalf("read a grant that is not whole: %+v", gr)
			}
		}
		if err := writeGrants(file, list); err != nil {
			t.Fatal(err)
		}
		again, err := readGrants(file)
		if err != nil {
			t.Fatalf("what was written does not read: %v", err)
		}
		sortGrants(list)
		if len(again) != len(list) {
			t.Fatalf("wrote %d grants, read back %d", len(list), len(again))
		}
		for i := range list {
			if list[i].Plugin != again[i].Plugin || list[i].Target() != again[i].Target() || list[i].Code != again[i].Code ||
				list[i].Signer != again[i].Signer || list[i].Access != again[i].Access || !list[i].Granted.Equal(again[i].Granted) {
				t.Fatalf("grant %d: wrote %+v, read back %+v", i, list[i], again[i])
			}
		}
	})
}
