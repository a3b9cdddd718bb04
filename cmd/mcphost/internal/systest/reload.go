package systest

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

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/wasmgen"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NoteTimeout bounds the wait for a notification that must come (a Go
// build included); it is a failure bound, not a synchronisation delay.
const NoteTimeout = 2 * time.Minute

// WasmPlugin assembles a tiny plugin: its tools answer label, and it lists
// the given resources and prompts.
func WasmPlugin(label string, tools, resources, prompts []string) []byte {
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

// ReloadEnv is one mcphost serve on a config in a temporary directory.
type ReloadEnv struct {
	Dir      string
	Conf     string
	S        *Server
	Notes    chan string // what the client received, in order
	barriers int
}

const ReloadHeader = "[server]\nname = \"reload\"\nplugin_dir = \"dropins\"\n"

// StartReload serves an empty config (plugin_dir only) with the extra
// serve flags given.
func StartReload(t testing.TB, flags ...string) *ReloadEnv {
	t.Helper()
	return StartReloadEra(t, "2025-11-25", flags...)
}

// StartReloadEra is startReload with the client's protocol version; in
// 2026-07-28 the notifications come through subscriptions/listen, and
// there is no logging/setLevel.
func StartReloadEra(t testing.TB, version string, flags ...string) *ReloadEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("runs mcphost serve")
	}
	e := &ReloadEnv{Dir: t.TempDir(), Notes: make(chan string, 256)}
	e.Conf = filepath.Join(e.Dir, "plugins.toml")
	e.Write(t, "plugins.toml", []byte(ReloadHeader))
	note := func(s string) { e.Notes <- s }
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
	e.S = StartServerEra(t, client, version, append([]string{"--config", e.Conf}, flags...)...)
	ctx := context.Background()
	// tools/list waits for the initial load; the watch began before it.
	if res, err := e.S.Session.ListTools(ctx, nil); err != nil || len(res.Tools) != 0 {
		t.Fatalf("initial tools/list: %v, %v; want no tools", res, err)
	}
	if version >= "2026-07-28" {
		return e
	}
	if err := e.S.Session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "error"}); err != nil {
		t.Fatalf("logging/setLevel: %v", err)
	}
	return e
}

// write replaces dir/name in place (truncate and write). A reload can run
// between the truncate and the write when the machine is slow enough to
// outlast the debounce, and then sees a prefix of the new content: steps
// that assert exact notifications change plugins.toml with replace.
func (e *ReloadEnv) Write(t testing.TB, name string, data []byte) {
	t.Helper()
	p := filepath.Join(e.Dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// replace replaces dir/name the way editors do: a temporary file renamed
// over it.
func (e *ReloadEnv) Replace(t testing.TB, name string, data []byte) {
	t.Helper()
	tmp := filepath.Join(e.Dir, name+".tmp~")
	if err := os.MkdirAll(filepath.Dir(tmp), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(e.Dir, name)); err != nil {
		t.Fatal(err)
	}
}

// expect waits for len(want) notifications and compares them, in any
// order, with want. A want of the form "message error: TEXT" matches an
// error log notification whose data contains TEXT.
func (e *ReloadEnv) Expect(t testing.TB, step string, want ...string) {
	t.Helper()
	var got []string
	timeout := time.NewTimer(NoteTimeout)
	defer timeout.Stop()
	for len(got) < len(want) {
		select {
		case n := <-e.Notes:
			got = append(got, n)
		case <-timeout.C:
			t.Fatalf("%s: got notifications %q; want %q (timed out)\nstderr:\n%s", step, got, want, e.Stderr())
		}
	}
	left := slices.Clone(got)
	for _, w := range want {
		i := slices.IndexFunc(left, func(g string) bool { return noteMatches(g, w) })
		if i < 0 {
			t.Fatalf("%s: got notifications %q; want %q\nstderr:\n%s", step, got, want, e.Stderr())
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
func (e *ReloadEnv) Stderr() string {
	lw := e.S.Cmd.Stderr.(*LockedWriter)
	lw.Mu.Lock()
	defer lw.Mu.Unlock()
	return e.S.Stderr.String()
}

// waitStderr waits until mcphost has logged s (or noteTimeout passes),
// woken by each write, and returns what it logged so far.
func (e *ReloadEnv) WaitStderr(s string) string {
	lw := e.S.Cmd.Stderr.(*LockedWriter)
	timeout := time.NewTimer(NoteTimeout)
	defer timeout.Stop()
	for {
		lw.Mu.Lock()
		got := e.S.Stderr.String()
		if strings.Contains(got, s) {
			lw.Mu.Unlock()
			return got
		}
		if lw.wrote == nil {
			lw.wrote = make(chan struct{})
		}
		wrote := lw.wrote
		lw.Mu.Unlock()
		select {
		case <-wrote:
		case <-timeout.C:
			return e.Stderr()
		}
	}
}

// barrier drops in a new plugin and expects its tools/list_changed as the
// very next notification.
func (e *ReloadEnv) Barrier(t testing.TB) {
	t.Helper()
	e.barriers++
	name := fmt.Sprintf("barrier%d", e.barriers)
	e.Replace(t, filepath.Join("dropins", name+".wasm"), WasmPlugin(name, []string{"b"}, nil, nil))
	e.Expect(t, "barrier", "tools/list_changed")
}

// tools returns the tool names tools/list reports now, sorted.
func (e *ReloadEnv) Tools(t testing.TB) []string {
	t.Helper()
	var names []string
	for tool, err := range e.S.Session.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// call calls a tool and returns its text.
func (e *ReloadEnv) Call(t testing.TB, name string) string {
	t.Helper()
	res, err := e.S.Session.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("tools/call %s: isError %s", name, TextOf(t, res))
	}
	return TextOf(t, res)
}

// GoPlugin is a self-contained Go plugin (no imports, raw Extism kernel
// calls) whose one tool is called name.
func GoPlugin(name string) string {
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

// WaitFor waits for a notification that starts with prefix, skipping
// others (progress lines at level info), and returns it. A list_changed
// before it fails the test unless prefix asks for one.
func (e *ReloadEnv) WaitFor(t testing.TB, step, prefix string) string {
	t.Helper()
	timeout := time.NewTimer(NoteTimeout)
	defer timeout.Stop()
	var seen []string
	for {
		select {
		case n := <-e.Notes:
			if strings.HasPrefix(n, prefix) {
				return n
			}
			if strings.HasSuffix(n, "list_changed") {
				t.Fatalf("%s: got %q before %q; want no list change\nstderr:\n%s", step, n, prefix, e.Stderr())
			}
			seen = append(seen, n)
		case <-timeout.C:
			t.Fatalf("%s: got notifications %q; want one starting %q (timed out)\nstderr:\n%s", step, seen, prefix, e.Stderr())
		}
	}
}
