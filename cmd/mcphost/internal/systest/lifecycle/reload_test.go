package lifecycle

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/mcphost/mcphost/internal/wasmgen"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The hot-reload end-to-end tests run the real `mcphost serve` (built
// without -race by mcphostBinary) on a plugins.toml in a temporary
// directory, connect the official SDK client over stdio, change files, and
// compare the notifications the client received with the exact list each
// change must cause. They wait on the client's handlers, never on time.
//
// Every test starts from a config without plugins, so the initial load
// notifies nothing, and ends with a barrier: a drop-in whose arrival must
// be the very next notification, which proves no stray one came before it.

func TestReloadConfigEdit(t *testing.T) {
	e := systest.StartReload(t)
	e.Write(t, "a.wasm", systest.WasmPlugin("a1", []string{"x"}, nil, nil))
	plugin := "\n[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n"

	e.Replace(t, "plugins.toml", []byte(systest.ReloadHeader+plugin))
	e.Expect(t, "a plugin added to plugins.toml", "tools/list_changed")
	if got, want := e.Tools(t), []string{"a_x"}; !slices.Equal(got, want) {
		t.Errorf("tools: got %q; want %q", got, want)
	}

	e.Replace(t, "plugins.toml", []byte(systest.ReloadHeader+plugin+"tool_prefix = \"alpha_\"\n"))
	e.Expect(t, "tool_prefix edited", "tools/list_changed")
	if got, want := e.Tools(t), []string{"alpha_x"}; !slices.Equal(got, want) {
		t.Errorf("tools: got %q; want %q", got, want)
	}

	e.Replace(t, "plugins.toml", []byte(systest.ReloadHeader+plugin+"tool_prefix = \n"))
	e.Expect(t, "a TOML syntax error", "message error: plugins.toml:8: expected value")
	if got, want := e.Tools(t), []string{"alpha_x"}; !slices.Equal(got, want) {
		t.Errorf("tools after the syntax error: got %q; want %q (unchanged)", got, want)
	}

	e.Replace(t, "plugins.toml", []byte(systest.ReloadHeader+plugin+"tool_prefix = \"beta_\"\n"))
	e.Expect(t, "the fix", "tools/list_changed")
	if got, want := e.Tools(t), []string{"beta_x"}; !slices.Equal(got, want) {
		t.Errorf("tools after the fix: got %q; want %q", got, want)
	}
	e.Barrier(t)

	// One line per reload on stderr (those before the barrier's are
	// complete: reloads run one after the other).
	logs := e.Stderr()
	for _, want := range []string{
		"msg=reloaded gen=2 plugins=[a] changed=[tools] dur=",
		"msg=reloaded gen=3 plugins=[] changed=[tools] dur=",
		`msg="reload failed" gen=3 trigger=[` + e.Conf + `] err="` + e.Conf + `:8: expected value`,
		"msg=reloaded gen=4 plugins=[] changed=[tools] dur=",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, logs)
		}
	}
}

func TestReloadWasm(t *testing.T) {
	e := systest.StartReload(t)
	e.Write(t, "a.wasm", systest.WasmPlugin("a1", []string{"x"}, []string{"mem://a"}, nil))
	e.Write(t, "b.wasm", systest.WasmPlugin("b1", []string{"y"}, nil, nil))
	e.Replace(t, "plugins.toml", []byte(systest.ReloadHeader+
		"\n[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n\n[[plugin]]\nname = \"b\"\npath = \"b.wasm\"\n"))
	e.Expect(t, "plugins added", "tools/list_changed", "resources/list_changed")
	ctx := context.Background()
	if err := e.S.Session.Subscribe(ctx, &mcp.SubscribeParams{URI: "mem://a"}); err != nil {
		t.Fatalf("resources/subscribe: %v", err)
	}

	e.Replace(t, "a.wasm", systest.WasmPlugin("a2", []string{"x2"}, []string{"mem://a"}, nil))
	e.Expect(t, "a.wasm replaced by rename", "tools/list_changed", "resources/updated mem://a")
	if got := e.Call(t, "a_x2"); got != "a2" {
		t.Errorf("a_x2 answered %q; want a2", got)
	}

	e.Write(t, "a.wasm", systest.WasmPlugin("a3", []string{"x3"}, []string{"mem://a"}, nil))
	e.Expect(t, "a.wasm written in place", "tools/list_changed", "resources/updated mem://a")

	// a.wasm saved unchanged in the same burst as a change to b: only b
	// reloads, so no resources/updated for a's URI.
	e.Write(t, "a.wasm", systest.WasmPlugin("a3", []string{"x3"}, []string{"mem://a"}, nil))
	e.Replace(t, "b.wasm", systest.WasmPlugin("b2", []string{"y2"}, nil, nil))
	e.Expect(t, "a.wasm saved unchanged, b.wasm changed", "tools/list_changed")

	e.Write(t, "a.wasm", []byte("\x00asm\x01\x00\x00\x00 not really"))
	e.Expect(t, "a bad module", `message error: previous version keeps serving`)
	if got := e.Call(t, "a_x3"); got != "a3" {
		t.Errorf("after the bad module, a_x3 answered %q; want a3 (the previous version)", got)
	}

	e.Replace(t, "a.wasm", systest.WasmPlugin("a4", []string{"x4"}, []string{"mem://a"}, nil))
	e.Expect(t, "the fix", "tools/list_changed", "resources/updated mem://a")
	if got, want := e.Tools(t), []string{"a_x4", "b_y2"}; !slices.Equal(got, want) {
		t.Errorf("tools: got %q; want %q", got, want)
	}
	e.Barrier(t)
}

func TestReloadDropIn(t *testing.T) {
	e := systest.StartReload(t)
	e.Replace(t, filepath.Join("dropins", "c.wasm"), systest.WasmPlugin("c1", []string{"t"}, nil, []string{"p"}))
	e.Expect(t, "drop-in added", "tools/list_changed", "prompts/list_changed")
	if got := e.Call(t, "c_t"); got != "c1" {
		t.Errorf("c_t answered %q; want c1", got)
	}
	if err := os.Remove(filepath.Join(e.Dir, "dropins", "c.wasm")); err != nil {
		t.Fatal(err)
	}
	e.Expect(t, "drop-in removed", "tools/list_changed", "prompts/list_changed")
	if got := e.Tools(t); len(got) != 0 {
		t.Errorf("tools after removal: got %q; want none", got)
	}

	// A plugin that fails on every call costs isError results, nothing
	// more: the host and the watch go on.
	e.Replace(t, filepath.Join("dropins", "bad.wasm"), wasmgen.Module(
		wasmgen.Func{Name: abi.ExportListTools, Output: `{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`},
		wasmgen.Func{Name: abi.ExportCallTool, Trap: true},
	))
	e.Expect(t, "a trapping drop-in added", "tools/list_changed")
	for range 3 {
		res, err := e.S.Session.CallTool(context.Background(), &mcp.CallToolParams{Name: "bad_t", Arguments: map[string]any{}})
		if err != nil || !res.IsError || !strings.Contains(systest.TextOf(t, res), "trap") {
			t.Fatalf("bad_t: got %+v, %v; want an isError result naming the trap", res, err)
		}
	}
	if err := os.Remove(filepath.Join(e.Dir, "dropins", "bad.wasm")); err != nil {
		t.Fatal(err)
	}
	e.Expect(t, "the trapping drop-in removed", "tools/list_changed")
	e.Barrier(t)
}

func TestReloadGoSource(t *testing.T) {
	e := systest.StartReload(t)
	e.Write(t, filepath.Join("src", "go.mod"), []byte("module example.com/reload\n\ngo 1.24\n"))
	e.Write(t, filepath.Join("src", "main.go"), []byte(systest.GoPlugin("first")))
	e.Replace(t, "plugins.toml", []byte(systest.ReloadHeader+"\n[[plugin]]\nname = \"g\"\nsource = \"src\"\n"))
	e.Expect(t, "a Go-source plugin added", "tools/list_changed")
	if got := e.Call(t, "g_first"); got != "first" {
		t.Errorf("g_first answered %q", got)
	}

	e.Replace(t, filepath.Join("src", "main.go"), []byte(systest.GoPlugin("second")))
	e.Expect(t, "main.go edited", "tools/list_changed")
	if got, want := e.Tools(t), []string{"g_second"}; !slices.Equal(got, want) {
		t.Errorf("tools: got %q; want %q", got, want)
	}

	e.Write(t, filepath.Join("src", "main.go"), []byte(strings.Replace(systest.GoPlugin("third"), "func main() {}", "func main() { nope() }", 1)))
	e.Expect(t, "a compile error", "message error: undefined: nope")
	if got := e.Call(t, "g_second"); got != "second" {
		t.Errorf("after the compile error, g_second answered %q; want second (the previous version)", got)
	}

	e.Write(t, filepath.Join("src", "main.go"), []byte(systest.GoPlugin("fourth")))
	e.Expect(t, "the fix", "tools/list_changed")
	if got, want := e.Tools(t), []string{"g_fourth"}; !slices.Equal(got, want) {
		t.Errorf("tools after the fix: got %q; want %q", got, want)
	}
	e.Barrier(t)
}

// TestReloadSaysNewCodeIsLive: a save that changes a tool's body and no
// list sends no list_changed, so clients at level info are told that the
// plugin's new code serves, with the plugin and the generation.
func TestReloadSaysNewCodeIsLive(t *testing.T) {
	e := systest.StartReload(t)
	ctx := context.Background()
	if err := e.S.Session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	// One list, two bodies: the tool's description stays, its answer changes.
	plugin := func(answer string) []byte {
		return wasmgen.Module(
			wasmgen.Func{Name: abi.ExportListTools, Output: `{"tools":[{"name":"x","description":"x","inputSchema":{"type":"object"}}]}`},
			wasmgen.Func{Name: abi.ExportCallTool, Output: `{"content":[{"type":"text","text":"` + answer + `"}]}`})
	}
	e.Write(t, "a.wasm", plugin("a1"))
	e.Replace(t, "plugins.toml", []byte(systest.ReloadHeader+"\n[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n"))
	// The load that adds a sends list_changed (after the host's coalescing
	// delay) and says a's code is live, in either order: both are taken
	// here, so that the next step hears only the next load.
	for listed, live := false, false; !listed || !live; {
		select {
		case n := <-e.Notes:
			listed = listed || n == "tools/list_changed"
			live = live || strings.HasPrefix(n, `message info {"gen":`)
		case <-time.After(systest.NoteTimeout):
			t.Fatalf("plugin added: no list_changed and live message (timed out)\nstderr:\n%s", e.Stderr())
		}
	}

	e.Replace(t, "a.wasm", plugin("a2"))
	got := e.WaitFor(t, "body changed", `message info {"gen":`)
	var data struct {
		Message string `json:"message"`
		Plugin  string `json:"plugin"`
		Gen     uint64 `json:"gen"`
	}
	if err := json.Unmarshal([]byte(strings.TrimPrefix(got, "message info ")), &data); err != nil {
		t.Fatal(err)
	}
	if data.Plugin != "a" || data.Gen < 2 || !strings.Contains(data.Message, "new code is live") {
		t.Errorf("notification %s; want plugin a, a generation after the first, and that its new code is live", got)
	}
	if got := e.Call(t, "a_x"); got != "a2" {
		t.Errorf("a_x answered %q; want a2 (the new code)", got)
	}
}
