package kits

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	askit "github.com/mcphost/mcphost/sdk-guest/assemblyscript"
	ckit "github.com/mcphost/mcphost/sdk-guest/c"
	tskit "github.com/mcphost/mcphost/sdk-guest/ts"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestKitTemplates writes each guest kit's `mcphost new` template into a
// temporary directory outside the repository, builds it offline with the
// kit's toolchain, runs the template's own test where it has one, serves
// it with `mcphost serve` and checks every item through the official MCP
// client: tool list and call, resource read, prompt get (the TypeScript
// kit's component has a tool only). It logs the time from writing the
// template to the tool being listed.
func TestKitTemplates(t *testing.T) {
	bin := systest.Binary(t) // built first, so the timing below is the kit's alone
	for _, kit := range []struct {
		lang  string
		write func(dir, name string) error
		build []string
		setup func(t *testing.T, dir string)
		test  []string // the template's own test, run with mcphost on PATH
		tool  string   // the tool's name after the plugin's
		desc  string   // its description, when the test checks it
		items bool     // the template has a resource and a prompt
	}{
		{lang: "c", write: ckit.Write, build: ckit.BuildCommand(), tool: "measure", items: true, setup: func(t *testing.T, dir string) {
			_, err := exec.LookPath("clang")
			systest.RequireTool(t, "clang is not installed", err == nil)
			_, err = os.Stat("/usr/lib/wasm32-wasi/crt1-reactor.o")
			systest.RequireTool(t, "wasi-libc is not installed", err == nil)
		}},
		{lang: "assemblyscript", write: askit.Write, build: askit.BuildCommand(), tool: "measure", items: true, setup: func(t *testing.T, dir string) {
			_, err := exec.LookPath("npm")
			systest.RequireTool(t, "npm is not installed", err == nil)
			tc := os.Getenv("MCPHOST_AS_TOOLCHAIN")
			_, err = os.Stat(filepath.Join(tc, "assemblyscript"))
			systest.RequireTool(t, "MCPHOST_AS_TOOLCHAIN does not name a node_modules with assemblyscript", tc != "" && err == nil)
			// Offline: the installed toolchain stands in for npm install.
			if err := os.Symlink(tc, filepath.Join(dir, "node_modules")); err != nil {
				t.Fatal(err)
			}
		}},
		{lang: "ts", write: tskit.Write, build: tskit.BuildCommand(), test: tskit.TestCommand(), tool: "measure",
			desc: "Counts the UTF-8 bytes, the words and the lines of a text.", setup: tsToolchain},
	} {
		t.Run(kit.lang, func(t *testing.T) {
			dir := t.TempDir()
			name := "k" + strings.ReplaceAll(kit.lang, "assemblyscript", "as")
			start := time.Now()
			if err := kit.write(dir, name); err != nil {
				t.Fatal(err)
			}
			kit.setup(t, dir)
			// No network: a proxy that refuses everything makes any
			// download attempt fail fast.
			env := append(os.Environ(), "npm_config_offline=true", "HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9")
			run := func(argv []string, env []string) {
				t.Helper()
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Dir, cmd.Env = dir, env
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
				}
				if len(out) > 0 {
					t.Logf("%s:\n%s", strings.Join(argv, " "), out)
				}
			}
			run(kit.build, env)
			built := time.Since(start)
			if kit.test != nil {
				// The first load compiles the component, so the server
				// below reads it from the compilation cache.
				run(kit.test, append(env, "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH")))
				t.Logf("%s: %s took %v (a first load: the compile)", kit.lang, strings.Join(kit.test, " "), (time.Since(start) - built).Round(time.Millisecond))
			}

			s := systest.StartServer(t, mcp.NewClient(&mcp.Implementation{Name: "kits", Version: "1"}, nil),
				"--config", filepath.Join(dir, "plugins.toml"), "--no-watch")
			ctx := context.Background()
			tools, err := s.Session.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			listed := time.Since(start)
			tool := name + "_" + kit.tool
			if len(tools.Tools) != 1 || tools.Tools[0].Name != tool || tools.Tools[0].OutputSchema == nil {
				t.Fatalf("tools/list: got %+v; want one tool %s with an output schema", tools.Tools, tool)
			}
			if kit.desc != "" && tools.Tools[0].Description != kit.desc {
				t.Errorf("tools/list: got description %q; want %q", tools.Tools[0].Description, kit.desc)
			}
			t.Logf("%s: template written, built in %v, tool listed after %v", kit.lang, built.Round(time.Millisecond), listed.Round(time.Millisecond))

			res, err := s.Session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "héllo wörld\n\"two\" lines 😀"}})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(res.StructuredContent)
			if want := `{"bytes":30,"lines":2,"words":5}`; res.IsError || string(got) != want {
				t.Errorf("tools/call: got %s (isError %v, %q); want %s", got, res.IsError, systest.TextOf(t, res), want)
			}
			// Inputs around and past the sizes a kit reads in one go (the
			// C kit's reused 1 KiB input buffer grows, then is let go after
			// a call over 64 KiB), each answered from its own bytes.
			for _, n := range []int{1000, 5000, 40, 100 << 10, 40} {
				text := strings.Repeat("ab cd\n", n/6+1)[:n]
				res, err := s.Session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": text}})
				if err != nil {
					t.Fatal(err)
				}
				got, _ := json.Marshal(res.StructuredContent)
				words, lines := len(strings.Fields(text)), strings.Count(text, "\n")
				if !strings.HasSuffix(text, "\n") {
					lines++
				}
				if want := fmt.Sprintf(`{"bytes":%d,"lines":%d,"words":%d}`, n, lines, words); res.IsError || string(got) != want {
					t.Errorf("tools/call of %d bytes: got %s (isError %v); want %s", n, got, res.IsError, want)
				}
			}
			res, err = s.Session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": 3}})
			if err != nil || !res.IsError {
				t.Errorf("tools/call with a bad argument: got %+v, %v; want isError", res, err)
			}
			if !kit.items {
				return
			}

			uri := name + "://about"
			rr, err := s.Session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
			if err != nil {
				t.Fatal(err)
			}
			if len(rr.Contents) != 1 || rr.Contents[0].URI != uri || !strings.HasPrefix(rr.Contents[0].Text, name+" is an mcphost plugin") {
				t.Errorf("resources/read: got %+v; want the about text", rr.Contents)
			}

			pr, err := s.Session.GetPrompt(ctx, &mcp.GetPromptParams{Name: name + "_summarize", Arguments: map[string]string{"text": `say "hi"`}})
			if err != nil {
				t.Fatal(err)
			}
			if len(pr.Messages) != 1 {
				t.Fatalf("prompts/get: got %d messages; want 1", len(pr.Messages))
			}
			if tc, ok := pr.Messages[0].Content.(*mcp.TextContent); !ok || !strings.HasSuffix(tc.Text, "\n\nsay \"hi\"") {
				t.Errorf("prompts/get: got %+v; want the text quoted at the end", pr.Messages[0].Content)
			}
		})
	}
}
