package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/wasmgen"
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

// noteTimeout bounds the wait for a notification that must come (a Go
// build included); it is a failure bound, not a synchronisation delay.
const noteTimeout = 2 * time.Minute

// wasmPlugin assembles a tiny plugin: its tools answer label, and it lists
// the given resources and prompts.
func wasmPlugin(label string, tools, resources, prompts []string) []byte {
	list := func(member string, items []string, item func(string) string) wasmgen.Func {
		var parts []string
		for _, it := range items {
			parts = append(parts, item(it))
		}
		return wasmgen.Func{Name: "list_" + member, Output: `{"` + member + `":[` + strings.Join(parts, ",") + `]}`}
	}
	fns := []wasmgen.Func{
		list("tools", tools, func(n string) string {
			return `{"name":"` + n + `","description":"` + label + `","inputSchema":{"type":"object"}}`
		}),
		{Name: abi.ExportCallTool, Output: `{"content":[{"type":"text","text":"` + label + `"}]}`},
	}
	if resources != nil {
		fns = append(fns, list("resources", resources, func(u string) string { return `{"uri":"` + u + `","name":"r"}` }),
			wasmgen.Func{Name: abi.ExportReadResource, Output: `{"contents":[{"uri":"mem://x","text":"` + label + `"}]}`})
	}
	if prompts != nil {
		fns = append(fns, list("prompts", prompts, func(n string) string { return `{"name":"` + n + `"}` }))
	}
	return wasmgen.Module(fns...)
}

// reloadEnv is one mcphost serve on a config in a temporary directory.
type reloadEnv struct {
	dir      string
	conf     string
	s        *server
	notes    chan string // what the client received, in order
	barriers int
}

const reloadHeader = "[server]\nname = \"reload\"\nplugin_dir = \"dropins\"\n"

// startReload serves an empty config (plugin_dir only) with the extra
// serve flags given.
func startReload(t testing.TB, flags ...string) *reloadEnv {
	t.Helper()
	return startReloadEra(t, "2025-11-25", flags...)
}

// startReloadEra is startReload with the client's protocol version; in
// 2026-07-28 the notifications come through subscriptions/listen, and
// there is no logging/setLevel.
func startReloadEra(t testing.TB, version string, flags ...string) *reloadEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("runs mcphost serve")
	}
	e := &reloadEnv{dir: t.TempDir(), notes: make(chan string, 256)}
	e.conf = filepath.Join(e.dir, "plugins.toml")
	e.write(t, "plugins.toml", []byte(reloadHeader))
	note := func(s string) { e.notes <- s }
	client := mcp.NewClient(&mcp.Implementation{Name: "reload-e2e", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) { note("tools/list_changed") },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { note("resources/list_changed") },
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) { note("prompts/list_changed") },
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			note("resources/updated " + r.Params.URI)
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			data, _ := json.Marshal(r.Params.Data)
			note(fmt.Sprintf("message %s %s", r.Params.Level, data))
		},
	})
	e.s = startServerEra(t, client, version, append([]string{"--config", e.conf}, flags...)...)
	ctx := context.Background()
	// tools/list waits for the initial load; the watch began before it.
	if res, err := e.s.session.ListTools(ctx, nil); err != nil || len(res.Tools) != 0 {
		t.Fatalf("initial tools/list: %v, %v; want no tools", res, err)
	}
	if version >= "2026-07-28" {
		return e
	}
	if err := e.s.session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "error"}); err != nil {
		t.Fatalf("logging/setLevel: %v", err)
	}
	return e
}

// write replaces dir/name in place (truncate and write). A reload can run
// between the truncate and the write when the machine is slow enough to
// outlast the debounce, and then sees a prefix of the new content: steps
// that assert exact notifications change plugins.toml with replace.
func (e *reloadEnv) write(t testing.TB, name string, data []byte) {
	t.Helper()
	p := filepath.Join(e.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// replace replaces dir/name the way editors do: a temporary file renamed
// over it.
func (e *reloadEnv) replace(t testing.TB, name string, data []byte) {
	t.Helper()
	tmp := filepath.Join(e.dir, name+".tmp~")
	if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(e.dir, name)); err != nil {
		t.Fatal(err)
	}
}

// expect waits for len(want) notifications and compares them, in any
// order, with want. A want of the form "message error: TEXT" matches an
// error log notification whose data contains TEXT.
func (e *reloadEnv) expect(t testing.TB, step string, want ...string) {
	t.Helper()
	var got []string
	timeout := time.NewTimer(noteTimeout)
	defer timeout.Stop()
	for len(got) < len(want) {
		select {
		case n := <-e.notes:
			got = append(got, n)
		case <-timeout.C:
			t.Fatalf("%s: got notifications %q; want %q (timed out)\nstderr:\n%s", step, got, want, e.stderr())
		}
	}
	left := slices.Clone(got)
	for _, w := range want {
		i := slices.IndexFunc(left, func(g string) bool { return noteMatches(g, w) })
		if i < 0 {
			t.Fatalf("%s: got notifications %q; want %q\nstderr:\n%s", step, got, want, e.stderr())
		}
		left = slices.Delete(left, i, i+1)
	}
}

func noteMatches(got, want string) bool {
	if text, ok := strings.CutPrefix(want, "message error: "); ok {
		return strings.HasPrefix(got, "message error ") && strings.Contains(got, text)
	}
	return got == want
}

// stderr returns what mcphost logged so far.
func (e *reloadEnv) stderr() string {
	lw := e.s.cmd.Stderr.(*lockedWriter)
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return e.s.stderr.String()
}

// waitStderr waits until mcphost has logged s (or noteTimeout passes),
// woken by each write, and returns what it logged so far.
func (e *reloadEnv) waitStderr(s string) string {
	lw := e.s.cmd.Stderr.(*lockedWriter)
	timeout := time.NewTimer(noteTimeout)
	defer timeout.Stop()
	for {
		lw.mu.Lock()
		got := e.s.stderr.String()
		if strings.Contains(got, s) {
			lw.mu.Unlock()
			return got
		}
		if lw.wrote == nil {
			lw.wrote = make(chan struct{})
		}
		wrote := lw.wrote
		lw.mu.Unlock()
		select {
		case <-wrote:
		case <-timeout.C:
			return e.stderr()
		}
	}
}

// barrier drops in a new plugin and expects its tools/list_changed as the
// very next notification.
func (e *reloadEnv) barrier(t testing.TB) {
	t.Helper()
	e.barriers++
	name := fmt.Sprintf("barrier%d", e.barriers)
	e.replace(t, filepath.Join("dropins", name+".wasm"), wasmPlugin(name, []string{"b"}, nil, nil))
	e.expect(t, "barrier", "tools/list_changed")
}

// tools returns the tool names tools/list reports now, sorted.
func (e *reloadEnv) tools(t testing.TB) []string {
	t.Helper()
	var names []string
	for tool, err := range e.s.session.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// call calls a tool and returns its text.
func (e *reloadEnv) call(t testing.TB, name string) string {
	t.Helper()
	res, err := e.s.session.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("tools/call %s: isError %s", name, textOf(t, res))
	}
	return textOf(t, res)
}

func TestReloadConfigEdit(t *testing.T) {
	e := startReload(t)
	e.write(t, "a.wasm", wasmPlugin("a1", []string{"x"}, nil, nil))
	plugin := "\n[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n"

	e.replace(t, "plugins.toml", []byte(reloadHeader+plugin))
	e.expect(t, "a plugin added to plugins.toml", "tools/list_changed")
	if got, want := e.tools(t), []string{"a_x"}; !slices.Equal(got, want) {
		t.Errorf("tools: got %q; want %q", got, want)
	}

	e.replace(t, "plugins.toml", []byte(reloadHeader+plugin+"tool_prefix = \"alpha_\"\n"))
	e.expect(t, "tool_prefix edited", "tools/list_changed")
	if got, want := e.tools(t), []string{"alpha_x"}; !slices.Equal(got, want) {
		t.Errorf("tools: got %q; want %q", got, want)
	}

	e.replace(t, "plugins.toml", []byte(reloadHeader+plugin+"tool_prefix = \n"))
	e.expect(t, "a TOML syntax error", "message error: plugins.toml:8: expected value")
	if got, want := e.tools(t), []string{"alpha_x"}; !slices.Equal(got, want) {
		t.Errorf("tools after the syntax error: got %q; want %q (unchanged)", got, want)
	}

	e.replace(t, "plugins.toml", []byte(reloadHeader+plugin+"tool_prefix = \"beta_\"\n"))
	e.expect(t, "the fix", "tools/list_changed")
	if got, want := e.tools(t), []string{"beta_x"}; !slices.Equal(got, want) {
		t.Errorf("tools after the fix: got %q; want %q", got, want)
	}
	e.barrier(t)

	// One line per reload on stderr (those before the barrier's are
	// complete: reloads run one after the other).
	logs := e.stderr()
	for _, want := range []string{
		"msg=reloaded gen=2 plugins=[a] changed=[tools] dur=",
		"msg=reloaded gen=3 plugins=[] changed=[tools] dur=",
		`msg="reload failed" gen=3 trigger=[` + e.conf + `] err="` + e.conf + `:8: expected value`,
		"msg=reloaded gen=4 plugins=[] changed=[tools] dur=",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, logs)
		}
	}
}

func TestReloadWasm(t *testing.T) {
	e := startReload(t)
	e.write(t, "a.wasm", wasmPlugin("a1", []string{"x"}, []string{"mem://a"}, nil))
	e.write(t, "b.wasm", wasmPlugin("b1", []string{"y"}, nil, nil))
	e.replace(t, "plugins.toml", []byte(reloadHeader+
		"\n[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n\n[[plugin]]\nname = \"b\"\npath = \"b.wasm\"\n"))
	e.expect(t, "plugins added", "tools/list_changed", "resources/list_changed")
	ctx := context.Background()
	if err := e.s.session.Subscribe(ctx, &mcp.SubscribeParams{URI: "mem://a"}); err != nil {
		t.Fatalf("resources/subscribe: %v", err)
	}

	e.replace(t, "a.wasm", wasmPlugin("a2", []string{"x2"}, []string{"mem://a"}, nil))
	e.expect(t, "a.wasm replaced by rename", "tools/list_changed", "resources/updated mem://a")
	if got := e.call(t, "a_x2"); got != "a2" {
		t.Errorf("a_x2 answered %q; want a2", got)
	}

	e.write(t, "a.wasm", wasmPlugin("a3", []string{"x3"}, []string{"mem://a"}, nil))
	e.expect(t, "a.wasm written in place", "tools/list_changed", "resources/updated mem://a")

	// a.wasm saved unchanged in the same burst as a change to b: only b
	// reloads, so no resources/updated for a's URI.
	e.write(t, "a.wasm", wasmPlugin("a3", []string{"x3"}, []string{"mem://a"}, nil))
	e.replace(t, "b.wasm", wasmPlugin("b2", []string{"y2"}, nil, nil))
	e.expect(t, "a.wasm saved unchanged, b.wasm changed", "tools/list_changed")

	e.write(t, "a.wasm", []byte("\x00asm\x01\x00\x00\x00 not really"))
	e.expect(t, "a bad module", `message error: previous version keeps serving`)
	if got := e.call(t, "a_x3"); got != "a3" {
		t.Errorf("after the bad module, a_x3 answered %q; want a3 (the previous version)", got)
	}

	e.replace(t, "a.wasm", wasmPlugin("a4", []string{"x4"}, []string{"mem://a"}, nil))
	e.expect(t, "the fix", "tools/list_changed", "resources/updated mem://a")
	if got, want := e.tools(t), []string{"a_x4", "b_y2"}; !slices.Equal(got, want) {
		t.Errorf("tools: got %q; want %q", got, want)
	}
	e.barrier(t)
}

func TestReloadDropIn(t *testing.T) {
	e := startReload(t)
	e.replace(t, filepath.Join("dropins", "c.wasm"), wasmPlugin("c1", []string{"t"}, nil, []string{"p"}))
	e.expect(t, "drop-in added", "tools/list_changed", "prompts/list_changed")
	if got := e.call(t, "c_t"); got != "c1" {
		t.Errorf("c_t answered %q; want c1", got)
	}
	if err := os.Remove(filepath.Join(e.dir, "dropins", "c.wasm")); err != nil {
		t.Fatal(err)
	}
	e.expect(t, "drop-in removed", "tools/list_changed", "prompts/list_changed")
	if got := e.tools(t); len(got) != 0 {
		t.Errorf("tools after removal: got %q; want none", got)
	}

	// A plugin that fails on every call costs isError results, nothing
	// more: the host and the watch go on.
	e.replace(t, filepath.Join("dropins", "bad.wasm"), wasmgen.Module(
		wasmgen.Func{Name: abi.ExportListTools, Output: `{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}`},
		wasmgen.Func{Name: abi.ExportCallTool, Trap: true},
	))
	e.expect(t, "a trapping drop-in added", "tools/list_changed")
	for range 3 {
		res, err := e.s.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "bad_t", Arguments: map[string]any{}})
		if err != nil || !res.IsError || !strings.Contains(textOf(t, res), "trap") {
			t.Fatalf("bad_t: got %+v, %v; want an isError result naming the trap", res, err)
		}
	}
	if err := os.Remove(filepath.Join(e.dir, "dropins", "bad.wasm")); err != nil {
		t.Fatal(err)
	}
	e.expect(t, "the trapping drop-in removed", "tools/list_changed")
	e.barrier(t)
}

// goPlugin is a self-contained Go plugin (no imports, raw Extism kernel
// calls) whose one tool is called name.
func goPlugin(name string) string {
	return `package main

//go:wasmimport extism:host/env alloc
func alloc(n uint64) uint64

//go:wasmimport extism:host/env store_u8
func storeU8(offset uint64, v uint32)

//go:wasmimport extism:host/env output_set
func outputSet(offset, n uint64)

const tool = "` + name + `"

func output(s string) int32 {
	p := alloc(uint64(len(s)))
	for i := 0; i < len(s); i++ {
		storeU8(p+uint64(i), uint32(s[i]))
	}
	outputSet(p, uint64(len(s)))
	return 0
}

//go:wasmexport list_tools
func listTools() int32 {
	return output(` + "`" + `{"tools":[{"name":"` + "`" + ` + tool + ` + "`" + `","inputSchema":{"type":"object"}}]}` + "`" + `)
}

//go:wasmexport call_tool
func callTool() int32 {
	return output(` + "`" + `{"content":[{"type":"text","text":"` + "`" + ` + tool + ` + "`" + `"}]}` + "`" + `)
}

func main() {}
`
}

func TestReloadGoSource(t *testing.T) {
	e := startReload(t)
	e.write(t, filepath.Join("src", "go.mod"), []byte("module example.com/reload\n\ngo 1.24\n"))
	e.write(t, filepath.Join("src", "main.go"), []byte(goPlugin("first")))
	e.replace(t, "plugins.toml", []byte(reloadHeader+"\n[[plugin]]\nname = \"g\"\nsource = \"src\"\n"))
	e.expect(t, "a Go-source plugin added", "tools/list_changed")
	if got := e.call(t, "g_first"); got != "first" {
		t.Errorf("g_first answered %q", got)
	}

	e.replace(t, filepath.Join("src", "main.go"), []byte(goPlugin("second")))
	e.expect(t, "main.go edited", "tools/list_changed")
	if got, want := e.tools(t), []string{"g_second"}; !slices.Equal(got, want) {
		t.Errorf("tools: got %q; want %q", got, want)
	}

	e.write(t, filepath.Join("src", "main.go"), []byte(strings.Replace(goPlugin("third"), "func main() {}", "func main() { nope() }", 1)))
	e.expect(t, "a compile error", "message error: undefined: nope")
	if got := e.call(t, "g_second"); got != "second" {
		t.Errorf("after the compile error, g_second answered %q; want second (the previous version)", got)
	}

	e.write(t, filepath.Join("src", "main.go"), []byte(goPlugin("fourth")))
	e.expect(t, "the fix", "tools/list_changed")
	if got, want := e.tools(t), []string{"g_fourth"}; !slices.Equal(got, want) {
		t.Errorf("tools after the fix: got %q; want %q", got, want)
	}
	e.barrier(t)
}

// TestReloadSaysNewCodeIsLive: a save that changes a tool's body and no
// list sends no list_changed, so clients at level info are told that the
// plugin's new code serves, with the plugin and the generation.
func TestReloadSaysNewCodeIsLive(t *testing.T) {
	e := startReload(t)
	ctx := context.Background()
	if err := e.s.session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	// One list, two bodies: the tool's description stays, its answer changes.
	plugin := func(answer string) []byte {
		return wasmgen.Module(
			wasmgen.Func{Name: abi.ExportListTools, Output: `{"tools":[{"name":"x","description":"x","inputSchema":{"type":"object"}}]}`},
			wasmgen.Func{Name: abi.ExportCallTool, Output: `{"content":[{"type":"text","text":"` + answer + `"}]}`})
	}
	e.write(t, "a.wasm", plugin("a1"))
	e.replace(t, "plugins.toml", []byte(reloadHeader+"\n[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n"))
	// The load that adds a sends list_changed (after the host's coalescing
	// delay) and says a's code is live, in either order: both are taken
	// here, so that the next step hears only the next load.
	for listed, live := false, false; !listed || !live; {
		select {
		case n := <-e.notes:
			listed = listed || n == "tools/list_changed"
			live = live || strings.HasPrefix(n, `message info {"gen":`)
		case <-time.After(noteTimeout):
			t.Fatalf("plugin added: no list_changed and live message (timed out)\nstderr:\n%s", e.stderr())
		}
	}

	e.replace(t, "a.wasm", plugin("a2"))
	got := e.waitFor(t, "body changed", `message info {"gen":`)
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
	if got := e.call(t, "a_x"); got != "a2" {
		t.Errorf("a_x answered %q; want a2 (the new code)", got)
	}
}

// waitFor waits for a notification that starts with prefix, skipping
// others (progress lines at level info), and returns it. A list_changed
// before it fails the test unless prefix asks for one.
func (e *reloadEnv) waitFor(t testing.TB, step, prefix string) string {
	t.Helper()
	timeout := time.NewTimer(noteTimeout)
	defer timeout.Stop()
	var seen []string
	for {
		select {
		case n := <-e.notes:
			if strings.HasPrefix(n, prefix) {
				return n
			}
			if strings.HasSuffix(n, "list_changed") {
				t.Fatalf("%s: got %q before %q; want no list change\nstderr:\n%s", step, n, prefix, e.stderr())
			}
			seen = append(seen, n)
		case <-timeout.C:
			t.Fatalf("%s: got notifications %q; want one starting %q (timed out)\nstderr:\n%s", step, seen, prefix, e.stderr())
		}
	}
}
