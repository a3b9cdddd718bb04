//go:build unix

package lifecycle

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/mcphost/mcphost/internal/wasmgen"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The startup tests run the real `mcphost serve` with two plugins: fast,
// a file that loads in milliseconds, and slow, whose build command blocks
// reading a fifo until the test writes to it. Nothing waits on time: the
// fifo is the slow plugin's clock.

// slowConfig is a plugins.toml with fast and slow, and the given [server]
// lines.
func slowConfig(server string) string {
	return "[server]\n" + server + `
[[plugin]]
name = "fast"
path = "fast.wasm"

[[plugin]]
name = "slow"
path = "slow.wasm"
build = ["sh", "-c", "read line < gate && cp slow.src slow.wasm"]
`
}

// startSlow writes fast.wasm, slow.src (what the build copies), the gate
// fifo and plugins.toml, and serves it with the official client, whose
// list_changed notifications arrive on e.notes.
func startSlow(t *testing.T, server string, flags ...string) *systest.ReloadEnv {
	t.Helper()
	if testing.Short() {
		t.Skip("runs mcphost serve")
	}
	e := &systest.ReloadEnv{Dir: t.TempDir(), Notes: make(chan string, 256)}
	e.Conf = filepath.Join(e.Dir, "plugins.toml")
	e.Write(t, "fast.wasm", systest.WasmPlugin("fast", []string{"hello"}, nil, nil))
	e.Write(t, "slow.src", systest.WasmPlugin("slow", []string{"late"}, nil, []string{"later"}))
	if err := syscall.Mkfifo(filepath.Join(e.Dir, "gate"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.Write(t, "plugins.toml", []byte(slowConfig(server)))
	note := func(s string) { e.Notes <- s }
	client := mcp.NewClient(&mcp.Implementation{Name: "startup-e2e", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler:   func(context.Context, *mcp.ToolListChangedRequest) { note("tools/list_changed") },
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { note("prompts/list_changed") },
	})
	e.S = systest.StartServer(t, client, append([]string{"--config", e.Conf}, flags...)...)
	return e
}

// TestSlowPluginJoinsLater: with a startup wait shorter than the slow
// build (3s, as in the issue; the fast plugin loads in milliseconds), the
// first tools/list answers with the fast plugin, whose tool is callable at
// once; the slow plugin joins with list_changed once its build ends.
func TestSlowPluginJoinsLater(t *testing.T) {
	e := startSlow(t, `startup_wait = "3s"`, "--no-watch")
	if got, want := e.Tools(t), []string{"fast_hello"}; !slices.Equal(got, want) {
		t.Fatalf("first tools/list = %q; want %q (the loaded plugin, without the one still building)\nstderr:\n%s", got, want, e.Stderr())
	}
	if got := e.Call(t, "fast_hello"); got != "fast" {
		t.Fatalf("fast_hello = %q; want fast", got)
	}
	e.Open(t)
	e.Expect(t, "slow plugin loaded", "tools/list_changed", "prompts/list_changed")
	if got, want := e.Tools(t), []string{"fast_hello", "slow_late"}; !slices.Equal(got, want) {
		t.Fatalf("tools/list after the build = %q; want %q", got, want)
	}
	if got := e.Call(t, "slow_late"); got != "slow" {
		t.Fatalf("slow_late = %q; want slow", got)
	}
}

// TestLoadedToolCallableAtOnce: with a startup wait far longer than the
// test, a call to the fast plugin's tool is answered while the slow one is
// still building; the first list then waits for the slow one.
func TestLoadedToolCallableAtOnce(t *testing.T) {
	e := startSlow(t, `startup_wait = "1h"`, "--no-watch")
	if got := e.Call(t, "fast_hello"); got != "fast" {
		t.Fatalf("fast_hello = %q; want fast", got)
	}
	e.Open(t)
	if got, want := e.Tools(t), []string{"fast_hello", "slow_late"}; !slices.Equal(got, want) {
		t.Fatalf("tools/list = %q; want %q", got, want)
	}
}

// TestReloadWhileStuck: a change to plugins.toml applies while the slow
// plugin's build is still blocked; the build runs again in the new load
// and the slow plugin joins when it ends.
func TestReloadWhileStuck(t *testing.T) {
	e := startSlow(t, `startup_wait = "3s"`)
	if got, want := e.Tools(t), []string{"fast_hello"}; !slices.Equal(got, want) {
		t.Fatalf("first tools/list = %q; want %q\nstderr:\n%s", got, want, e.Stderr())
	}
	e.Write(t, "extra.wasm", systest.WasmPlugin("extra", []string{"more"}, nil, nil))
	e.Replace(t, "plugins.toml", []byte(slowConfig(`startup_wait = "3s"`)+"\n[[plugin]]\nname = \"extra\"\npath = \"extra.wasm\"\n"))
	e.Expect(t, "extra plugin added while slow builds", "tools/list_changed")
	if got, want := e.Tools(t), []string{"extra_more", "fast_hello"}; !slices.Equal(got, want) {
		t.Fatalf("tools/list after the edit = %q; want %q\nstderr:\n%s", got, want, e.Stderr())
	}
	e.Open(t)
	e.Expect(t, "slow plugin loaded", "tools/list_changed", "prompts/list_changed")
	if got, want := e.Tools(t), []string{"extra_more", "fast_hello", "slow_late"}; !slices.Equal(got, want) {
		t.Fatalf("tools/list after the build = %q; want %q", got, want)
	}
}

// TestLoadTimeoutEndsStuckBuild: a build that never ends is stopped by
// the plugin's load_timeout; the plugin fails alone, with a message that
// names the key, and the other serves.
func TestLoadTimeoutEndsStuckBuild(t *testing.T) {
	e := startSlow(t, `startup_wait = "1h"`+"\nload_timeout = \"500ms\"", "--no-watch")
	// The first list waits for the initial load, which ends when the
	// build is stopped.
	if got, want := e.Tools(t), []string{"fast_hello"}; !slices.Equal(got, want) {
		t.Fatalf("tools/list = %q; want %q\nstderr:\n%s", got, want, e.Stderr())
	}
	// The list is answered once the generation without the stopped plugin
	// is published; the failure is logged just after.
	if got := e.WaitStderr("load did not finish within load_timeout (500ms"); !strings.Contains(got, "load did not finish within load_timeout (500ms") {
		t.Errorf("stderr lacks the load_timeout failure:\n%s", got)
	}
	if got := e.Call(t, "fast_hello"); got != "fast" {
		t.Fatalf("fast_hello = %q; want fast", got)
	}
}

// TestValidateStopsOnFirstSignal: validate, with one plugin's build
// blocked and another's start function looping forever (its timeouts far
// away), ends on the first SIGTERM, saying so, without a second signal.
func TestValidateStopsOnFirstSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mcphost validate")
	}
	dir := t.TempDir()
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("fast.wasm", systest.WasmPlugin("fast", []string{"hello"}, nil, nil))
	write("slow.src", systest.WasmPlugin("slow", []string{"late"}, nil, nil))
	write("spin.wasm", wasmgen.Module(
		wasmgen.Func{Name: "list_tools", Output: `{"tools":[]}`},
		wasmgen.Func{Start: true, Spin: true},
	))
	if err := syscall.Mkfifo(filepath.Join(dir, "gate"), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := slowConfig("") + `
[[plugin]]
name = "spin"
path = "spin.wasm"
timeout = "1h"
load_timeout = "1h"
`
	write("plugins.toml", []byte(conf))
	p := startProc(t, nil, "validate", "--config", filepath.Join(dir, "plugins.toml"))
	p.waitLog(t, "plugin step started")
	p.signal(t, syscall.SIGTERM)
	if code := p.exit(t, waitLong); code == 128+int(syscall.SIGTERM) || code == 0 {
		t.Errorf("exit status %d; want a failure of validate's own (not 0, not the second signal's)\nstderr:\n%s", code, p.stderr())
	}
	if got := p.stderr(); !strings.Contains(got, "stopped by a signal") {
		t.Errorf("stderr does not say validate was stopped:\n%s", got)
	}
}
