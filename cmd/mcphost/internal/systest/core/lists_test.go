package core

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/cli"
	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/sandbox"
)

// lists runs `mcphost lists args...` in-process.
func lists(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = cli.Run(append([]string{"lists"}, args...), strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestListsCommand: `mcphost lists FILE` says what FILE's section holds,
// --embed writes it (--dynamic, a dynamic one), and mistakes are usage
// errors that say what to change.
func TestListsCommand(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	file := filepath.Join(t.TempDir(), "p.wasm")
	if err := os.WriteFile(file, systest.WasmPlugin("p", []string{"a", "b"}, []string{"mem://r"}, []string{"greet"}), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"no section yet", []string{file}, 0, "no mcphost:lists section (write one with mcphost lists --embed", ""},
		{"embed", []string{"--embed", file}, 0, "mcphost:lists holds 2 tools, 1 resources, 0 resource templates, 1 prompts", ""},
		{"read back", []string{file}, 0, "mcphost:lists holds 2 tools, 1 resources", ""},
		{"flag after FILE", []string{file, "--embed"}, 0, "holds 2 tools", ""},
		{"dynamic", []string{"--embed", "--dynamic", "tools come from config", file}, 0, "says dynamic: tools come from config", ""},
		{"dynamic read back", []string{file}, 0, "says dynamic: tools come from config", ""},
		{"dynamic without embed", []string{"--dynamic", "x", file}, 2, "", "--dynamic says what --embed writes: add --embed"},
		{"misspelt flag", []string{"--embd", file}, 2, "", "unknown flag --embd (did you mean --embed?)"},
		{"no FILE", nil, 2, "", "want one FILE, got 0 arguments"},
		{"missing FILE", []string{"--embed", filepath.Join(t.TempDir(), "none.wasm")}, 1, "", "no such file"},
		{"not wasm", []string{"--embed", "main.go"}, 1, "", "mcphost lists: main.go"},
	}
	for _, tt := range tests {
		code, stdout, stderr := lists(tt.args...)
		if code != tt.code || !strings.Contains(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
			t.Errorf("%s: mcphost lists %q: exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q",
				tt.name, tt.args, code, stdout, stderr, tt.code, tt.stdout, tt.stderr)
		}
	}
	// The code is unchanged: only the section was added.
	wasm, _ := os.ReadFile(file)
	if got, err := sandbox.FuncExports(wasm); err != nil || !slices.Contains(got, "list_tools") {
		t.Errorf("exports after --embed: %v, %v", got, err)
	}
}

// TestListsSectionServe: a first start (empty caches) of plugins whose
// .wasm carries the lists section lists them without running their
// guests (the log says so, and no module loads before a call); a stale
// section serves until the plugin's first use, which corrects it with
// list_changed; a dynamic plugin is run to list it.
func TestListsSectionServe(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mcphost serve")
	}
	systest.Binary(t) // built before the cache moves: go's own cache is under it
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache")) // empty: no list cache, no compiled code
	embed := func(name string, args ...string) string {
		file := filepath.Join(dir, name+".wasm")
		if err := os.WriteFile(file, systest.WasmPlugin(name, []string{"now"}, nil, nil), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, _, stderr := lists(append(append([]string{"--embed"}, args...), file)...); code != 0 {
			t.Fatalf("lists --embed %s: exit %d: %s", name, code, stderr)
		}
		return file
	}
	embed("good")
	embed("dynamic", "--dynamic", "lists the time")
	// stale: its section lists a tool the guest no longer has.
	stale := embed("stale")
	wasm, _ := os.ReadFile(stale)
	body, _, err := sandbox.CustomSection(wasm, plugins.ListsSection)
	if err != nil {
		t.Fatal(err)
	}
	gone := strings.Replace(string(body), `"tools":[`, `"tools":[{"name":"gone","inputSchema":{"type":"object"}},`, 1)
	if wasm, err = sandbox.WithCustomSection(wasm, plugins.ListsSection, []byte(gone)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "plugins.toml")
	cfg := "[server]\nname = \"sections\"\n"
	for _, p := range []string{"good", "stale", "dynamic"} {
		cfg += "\n[[plugin]]\nname = \"" + p + "\"\npath = \"" + p + ".wasm\"\n"
	}
	if err := os.WriteFile(conf, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}

	e := &systest.ReloadEnv{Dir: dir, Conf: conf, Notes: make(chan string, 16)}
	client := mcp.NewClient(&mcp.Implementation{Name: "sections", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { e.Notes <- "tools/list_changed" },
	})
	e.S = systest.StartServer(t, client, "--config", conf, "--no-watch", "--log-level", "debug")
	want := []string{"dynamic_now", "good_now", "stale_gone", "stale_now"}
	if got := e.Tools(t); !slices.Equal(got, want) {
		t.Fatalf("first start lists %q; want %q\nstderr:\n%s", got, want, e.Stderr())
	}
	// The log reaches us through a pipe that may still hold a line the
	// server wrote before it answered: wait for each line looked for.
	for _, p := range []string{"good", "stale"} {
		listed := `plugin listed from its lists section; its module loads on first use" plugin=` + p
		log := e.WaitStderr(listed)
		if !strings.Contains(log, listed) {
			t.Errorf("%s not listed from its section\nstderr:\n%s", p, log)
		}
		if strings.Contains(log, `plugin module loaded on first use" plugin=`+p) {
			t.Errorf("%s's module loaded before any call\nstderr:\n%s", p, log)
		}
	}
	runToList := `lists section says the lists are dynamic; the plugin is run to list it" plugin=dynamic`
	if log := e.WaitStderr(runToList); strings.Contains(log, "lists section; its module loads on first use\" plugin=dynamic") ||
		!strings.Contains(log, runToList) {
		t.Errorf("the dynamic plugin was not run to list it\nstderr:\n%s", log)
	}

	if got := e.Call(t, "stale_now"); got != "stale" {
		t.Fatalf("stale_now = %q", got)
	}
	e.Expect(t, "stale section corrected on first use", "tools/list_changed")
	if got := e.Tools(t); slices.Contains(got, "stale_gone") {
		t.Errorf("after the check, tools %q still hold stale_gone", got)
	}
	corrected := `plugin lists differ from the cached ones; re-reading them" plugin=stale`
	if log := e.WaitStderr(corrected); !strings.Contains(log, corrected) {
		t.Errorf("the correction is not logged\nstderr:\n%s", log)
	}
	if got := e.Call(t, "good_now"); got != "good" {
		t.Fatalf("good_now = %q", got)
	}
	select {
	case n := <-e.Notes:
		t.Errorf("a section that was right sent %s", n)
	default:
	}
}
