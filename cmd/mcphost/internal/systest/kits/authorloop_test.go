package kits

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// loopKit is what TestAuthorLoop edits in one kit's template: a file, an
// edit that changes what the tool returns (and no list), and one that
// renames the tool.
type loopKit struct {
	file           string // the source to edit, in the plugin's directory
	tool           string // the tool's name, without the plugin prefix
	output, rename [2]string
	// renameAlso are edits saved with rename, where a rename takes more
	// than one (a component's tool is named in its WIT and its source);
	// renamed is the tool's new name, default tool + "_v2".
	renameAlso    []fileEdit
	renamed       string
	args          map[string]any
	before, after string // in the tool's structured output, before and after the output edit
	setup         func(t *testing.T, dir string)
}

// fileEdit replaces repl[0] with repl[1] in file.
type fileEdit struct {
	file string
	repl [2]string
}

// loopKits are the kits TestAuthorLoop knows. A kit `mcphost new` lists
// without an entry here fails the loop: add its edits.
var loopKits = map[string]loopKit{
	"go": {file: "main.go", tool: "count_words",
		output: [2]string{"out.Words++", "out.Words += 2"}, rename: [2]string{`Name:        "count_words",`, `Name:        "count_words_v2",`},
		args: map[string]any{"text": "ab cd efg"}, before: `"words":3`, after: `"words":6`},
	"c": {file: "plugin.c", tool: "measure",
		output: [2]string{"words++;", "words += 2;"}, rename: [2]string{`\"name\":\"measure\"`, `\"name\":\"measure_v2\"`},
		args: map[string]any{"text": "ab cd efg"}, before: `"words":3`, after: `"words":6`},
	"assemblyscript": {file: "index.ts", tool: "measure",
		output: [2]string{"words++;", "words += 2;"}, rename: [2]string{`"name":"measure"`, `"name":"measure_v2"`},
		args: map[string]any{"text": "ab cd efg"}, before: `"words":3`, after: `"words":6`,
		setup: func(t *testing.T, dir string) {
			// Offline: the installed toolchain stands in for npm install.
			tc := os.Getenv("MCPHOST_AS_TOOLCHAIN")
			if _, err := os.Stat(filepath.Join(tc, "assemblyscript")); tc == "" || err != nil {
				t.Fatal("MCPHOST_AS_TOOLCHAIN does not name a node_modules with assemblyscript (scripts/kits.sh --env sets it)")
			}
			if err := os.Symlink(tc, filepath.Join(dir, "node_modules")); err != nil {
				t.Fatal(err)
			}
		}},
	"ts": {file: "src/index.ts", tool: "measure",
		output: [2]string{`.filter((w) => w !== "").length;`, `.filter((w) => w !== "").length * 2;`},
		rename: [2]string{"export function measure(", "export function measureV2("},
		renameAlso: []fileEdit{
			{"src/index.ts", [2]string{"({ measure })", "({ measureV2 })"}},
			{"wit/world.wit", [2]string{"export measure:", "export measure-v2:"}},
		},
		renamed: "measure-v2",
		args:    map[string]any{"text": "ab cd efg"}, before: `"words":3`, after: `"words":6`,
		setup: func(t *testing.T, dir string) {
			tc := os.Getenv("MCPHOST_TS_TOOLCHAIN")
			if _, err := os.Stat(filepath.Join(tc, "@bytecodealliance", "componentize-js")); tc == "" || err != nil {
				t.Fatal("MCPHOST_TS_TOOLCHAIN does not name a node_modules with @bytecodealliance/componentize-js (scripts/kits.sh --env sets it)")
			}
			if err := os.Symlink(tc, filepath.Join(dir, "node_modules")); err != nil {
				t.Fatal(err)
			}
		}},
}

// loopEvents is what the client hears while the loop runs.
type loopEvents struct {
	listChanged chan time.Time
	live        chan time.Time    // "plugin reloaded: its new code is live"
	builds      chan string       // the dur of every build step done
	failed      chan string       // a plugin that failed to load or reload
	mu          sync.Mutex        // guards log
	log         []json.RawMessage // every log message, for a failure's report
}

func (e *loopEvents) handle(_ context.Context, r *mcp.LoggingMessageRequest) {
	raw, _ := json.Marshal(r.Params.Data)
	e.mu.Lock()
	e.log = append(e.log, raw)
	e.mu.Unlock()
	var d map[string]any
	if json.Unmarshal(raw, &d) != nil {
		return
	}
	switch msg, _ := d["message"].(string); {
	case msg == "plugin reloaded: its new code is live":
		e.live <- time.Now()
	case msg == "plugin step done" && d["step"] == "build":
		dur, _ := d["dur"].(string)
		if d["ok"] == false {
			dur = "failed"
		}
		e.builds <- dur
	case strings.HasPrefix(msg, "plugin failed"):
		e.failed <- fmt.Sprint(d["error"])
	}
}

// TestAuthorLoop drives the author's loop of one kit as a new user would
// (scripts/authorloop.sh runs it for each kit, naming it in
// MCPHOST_AUTHORLOOP_KIT): `mcphost new` in a temporary directory outside
// the repository, `mcphost serve` with the watcher under an environment
// holding only PATH (MCPHOST_AUTHORLOOP_PATH, default /usr/bin:/bin),
// the official Go SDK client connected; then it edits what the tool
// returns, saves and calls until the new output comes, and renames the
// tool, saves and waits for list_changed. It prints the time from each
// save to the new output and to list_changed, and the build's share.
func TestAuthorLoop(t *testing.T) {
	lang := os.Getenv("MCPHOST_AUTHORLOOP_KIT")
	if lang == "" {
		t.Skip("skipping: run by scripts/authorloop.sh, which names the kit in MCPHOST_AUTHORLOOP_KIT")
	}
	k, ok := loopKits[lang]
	if !ok {
		t.Fatalf("kit %q: TestAuthorLoop has no edits for it; add an entry to loopKits", lang)
	}
	bin := systest.Binary(t)
	root, err := os.MkdirTemp("", "mcphost-authorloop-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	env := []string{"PATH=" + cmp.Or(os.Getenv("MCPHOST_AUTHORLOOP_PATH"), "/usr/bin:/bin")}
	const name = "loop"
	dir := filepath.Join(root, name)

	start := time.Now()
	newCmd := exec.Command(bin, "new", name, "--lang", lang, "--dir", dir)
	newCmd.Env = env
	if out, err := newCmd.CombinedOutput(); err != nil {
		t.Fatalf("mcphost new: %v\n%s", err, out)
	}
	if k.setup != nil {
		k.setup(t, dir)
	}

	ev := &loopEvents{listChanged: make(chan time.Time, 16), live: make(chan time.Time, 16),
		builds: make(chan string, 64), failed: make(chan string, 16)}
	client := mcp.NewClient(&mcp.Implementation{Name: "authorloop", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { ev.listChanged <- time.Now() },
		LoggingMessageHandler:  ev.handle,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	serve := exec.Command(bin, "serve")
	serve.Dir, serve.Env = dir, env
	var stderr bytes.Buffer
	serve.Stderr = &systest.LockedWriter{W: &stderr}
	// 2025-11-25: a session, with logging/setLevel and list_changed.
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: serve}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
	}
	defer session.Close()
	fail := func(format string, args ...any) {
		t.Helper()
		ev.mu.Lock()
		var logs []string
		for _, l := range ev.log {
			logs = append(logs, string(l))
		}
		ev.mu.Unlock()
		t.Fatalf(format+"\nclient log:\n%s\nstderr:\n%s", append(args, strings.Join(logs, "\n"), stderr.String())...)
	}
	if err := session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}

	// The first start builds the plugin; the lists wait for it (or, past
	// the startup wait, list_changed follows).
	tool := name + "_" + k.tool
	for !hasTool(t, ctx, session, tool) {
		select {
		case <-ev.listChanged:
		case msg := <-ev.failed:
			fail("first start: %s", msg)
		case <-ctx.Done():
			fail("first start: %s never listed", tool)
		}
	}
	firstStart := time.Since(start)
	if out := callOut(t, ctx, session, tool, k.args); !strings.Contains(out, k.before) {
		fail("first call: got %s; want %s in it", out, k.before)
	}
	drain(ev.builds)
	drain(ev.live)

	// Edit what the tool returns: no list changes; the new code is live
	// once the client is told so.
	saved := edit(t, filepath.Join(dir, k.file), k.output)
	select {
	case <-ev.live:
	case msg := <-ev.failed:
		fail("output edit: %s", msg)
	case <-ctx.Done():
		fail("output edit: no reload")
	}
	out := callOut(t, ctx, session, tool, k.args)
	toOutput := time.Since(saved)
	if !strings.Contains(out, k.after) {
		fail("after the output edit: got %s; want %s in it", out, k.after)
	}
	outBuild := lastBuild(ev.builds)

	// Rename the tool: list_changed, and the new name listed.
	saved = edit(t, filepath.Join(dir, k.file), k.rename)
	for _, e := range k.renameAlso {
		saved = edit(t, filepath.Join(dir, e.file), e.repl)
	}
	renamed := name + "_" + cmp.Or(k.renamed, k.tool+"_v2")
	var toListChanged time.Duration
	select {
	case at := <-ev.listChanged:
		toListChanged = at.Sub(saved)
	case msg := <-ev.failed:
		fail("rename: %s", msg)
	case <-ctx.Done():
		fail("rename: no list_changed")
	}
	if !hasTool(t, ctx, session, renamed) {
		fail("after the rename: %s not listed", renamed)
	}
	renameBuild := lastBuild(ev.builds)

	load := "?"
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		load = strings.Fields(string(b))[0]
	}
	line := fmt.Sprintf("authorloop %s: save→new output %v (build %s), save→list_changed %v (build %s); first start (new → tool listed) %v; load %s on %d CPUs",
		lang, toOutput.Round(time.Millisecond), outBuild, toListChanged.Round(time.Millisecond), renameBuild, firstStart.Round(time.Millisecond),
		load, runtime.NumCPU())
	t.Log(line)
	fmt.Println(line)
}

// edit replaces the first of the pair with the second in file, as an
// editor's save, and returns when it was saved.
func edit(t *testing.T, file string, repl [2]string) time.Time {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(repl[0])) {
		t.Fatalf("%s holds no %q: the kit's template changed; update loopKits", file, repl[0])
	}
	b = bytes.Replace(b, []byte(repl[0]), []byte(repl[1]), 1)
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return time.Now()
}

func hasTool(t *testing.T, ctx context.Context, s *mcp.ClientSession, name string) bool {
	t.Helper()
	res, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range res.Tools {
		if tl.Name == name {
			return true
		}
	}
	return false
}

// callOut calls a tool and returns its structured output as JSON.
func callOut(t *testing.T, ctx context.Context, s *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res.StructuredContent)
	return string(b)
}

// lastBuild returns the duration of the last build reported so far.
func lastBuild(builds chan string) string {
	last := "none"
	for {
		select {
		case d := <-builds:
			last = d
		default:
			return last
		}
	}
}

func drain[T any](c chan T) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}
