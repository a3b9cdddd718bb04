package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/sandbox"
)

// sectionModule is a guest that lists a tool and a prompt.
func sectionModule() []byte {
	one := int32(abi.Version)
	return wasmModule(
		wfunc{name: abi.ExportListTools, output: `{"tools":[` + tool("now") + `]}`},
		wfunc{name: abi.ExportCallTool, output: `{"content":[{"type":"text","text":"12:00"}]}`},
		wfunc{name: abi.ExportListPrompts, output: `{"prompts":[{"name":"greet"}]}`},
		wfunc{name: abi.ExportABIVersion, i32: &one},
	)
}

// embed writes wasm's lists section, failing the test on error.
func embed(t *testing.T, engine *sandbox.Engine, wasm []byte, dynamic string) ([]byte, SectionInfo) {
	t.Helper()
	l := NewLoader(LoaderOptions{Engine: engine, Logger: discard()})
	out, info, err := l.EmbedLists(context.Background(), "clock", wasm, dynamic)
	if err != nil {
		t.Fatalf("EmbedLists: %v", err)
	}
	return out, info
}

// TestListsSectionRoundTrip: what EmbedLists writes reads back as the
// lists the guest returns, and writing it again replaces it.
func TestListsSectionRoundTrip(t *testing.T) {
	engine := newEngine(t)
	wasm := sectionModule()
	out, info := embed(t, engine, wasm, "")
	if info.Dynamic != "" || info.Tools != 1 || info.Prompts != 1 {
		t.Fatalf("info = %+v; want 1 tool, 1 prompt, not dynamic", info)
	}
	body, found, err := sandbox.CustomSection(out, ListsSection)
	if err != nil || !found {
		t.Fatalf("section: %v, found %v", err, found)
	}
	s, err := parseListsSection(body)
	if err != nil {
		t.Fatal(err)
	}
	m, err := engine.Load(context.Background(), "clock", wasm, sandbox.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	fresh, err := freshLists(context.Background(), m, "clock")
	if err != nil {
		t.Fatal(err)
	}
	got := &listEntry{ABI: s.ABI, Lists: s.Lists}
	if !got.equal(fresh) || s.GuestVersion != abi.Version {
		t.Fatalf("section %s; want the guest's lists (abi %d) and guest version %d", body, fresh.ABI, abi.Version)
	}
	again, _ := embed(t, engine, out, "")
	if !bytes.Equal(again, out) {
		t.Errorf("embedding twice changed the binary")
	}
	dyn, info := embed(t, engine, out, "reads its tools from config")
	if info.Dynamic != "reads its tools from config" || info.Tools != 0 {
		t.Errorf("dynamic info = %+v", info)
	}
	if b, _, _ := sandbox.CustomSection(dyn, ListsSection); strings.Contains(string(b), `"tools":`) {
		t.Errorf("a dynamic section holds lists: %s", b)
	}
	// A guest that cannot list in the empty world gets a dynamic section.
	broken := wasmModule(wfunc{name: abi.ExportListTools, trap: true})
	if _, info := embed(t, engine, broken, ""); !strings.HasPrefix(info.Dynamic, "listing without config, env or secrets failed") {
		t.Errorf("a guest whose list traps: info %+v; want dynamic", info)
	}
}

// TestListsSectionFirstStart: with an empty list cache, a plugin whose
// binary holds its lists is listed without loading its module; its first
// use checks them (a stale section is corrected and signalled); a
// dynamic section, a plugin given config, and a malformed section are
// loaded to be listed, the last with a warning.
func TestListsSectionFirstStart(t *testing.T) {
	ctx := context.Background()
	engine := newEngine(t)
	good, _ := embed(t, engine, sectionModule(), "")
	dynamic, _ := embed(t, engine, sectionModule(), "depends on the clock")
	body, _, _ := sandbox.CustomSection(good, ListsSection)
	staleBody := strings.Replace(string(body), `"tools":[`, `"tools":[`+tool("gone")+`,`, 1)
	stale, err := sandbox.WithCustomSection(good, ListsSection, []byte(staleBody))
	if err != nil {
		t.Fatal(err)
	}
	section := func(body string) []byte {
		b, err := sandbox.WithCustomSection(sectionModule(), ListsSection, []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name   string
		wasm   []byte
		config map[string]string
		loads  int32  // at Build
		warn   string // in the log
		signal bool   // on first use
		gone   bool   // clock_gone listed before first use
	}{
		{name: "section", wasm: good},
		{name: "stale section", wasm: stale, signal: true, gone: true},
		{name: "dynamic", wasm: dynamic, loads: 1},
		{name: "given config", wasm: good, config: map[string]string{"tz": "UTC"}, loads: 1},
		{name: "not json", wasm: section(`{"format":1,`), loads: 1, warn: "lists section ignored"},
		{name: "other format", wasm: section(`{"format":99,"abi":2}`), loads: 1, warn: "format 99"},
		{name: "bad abi", wasm: section(`{"format":1,"abi":7}`), loads: 1, warn: "abi 7"},
		{name: "too large", wasm: section(`{"format":1,"abi":2,"x":"` + strings.Repeat("x", maxListsSection) + `"}`), loads: 1, warn: "more than the"},
		{name: "two sections", wasm: append(slices.Clone(good), good[len(sectionModule()):]...), loads: 1, warn: "a second custom section"},
		{name: "no section", wasm: sectionModule(), loads: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "clock.wasm")
			if err := os.WriteFile(file, tt.wasm, 0o600); err != nil {
				t.Fatal(err)
			}
			cfg := config.DefaultConfig()
			cfg.Plugins = []config.Spec{{Name: "clock", Path: file, Config: tt.config}}
			var logs bytes.Buffer
			l, loads := countingLoader(t, filepath.Join(dir, "lists"), engine)
			l.log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			g, err := l.Build(ctx, cfg, nil)
			if err != nil || len(g.Failures) > 0 {
				t.Fatalf("Build: %v %v", err, g.Failures)
			}
			defer g.Close(ctx)
			if loads.Load() != tt.loads || g.Tool("clock_now") == nil || g.Prompt("greet") == nil || (g.Tool("clock_gone") != nil) != tt.gone {
				t.Fatalf("first start: %d loads, now %v, greet %v, gone %v; want %d loads", loads.Load(),
					g.Tool("clock_now") != nil, g.Prompt("greet") != nil, g.Tool("clock_gone") != nil, tt.loads)
			}
			if fromSection := strings.Contains(logs.String(), "plugin listed from its lists section"); fromSection != (tt.loads == 0) {
				t.Errorf("log says listed from the section: %v; want %v\n%s", fromSection, tt.loads == 0, logs.String())
			}
			// Listed from the section or by running it, the plugin is in
			// the list cache for the next start.
			if entries, _ := filepath.Glob(filepath.Join(dir, "lists", "*.json")); len(entries) != 1 {
				t.Errorf("list cache %v after the first start; want one entry", entries)
			}
			if tt.warn != "" && !strings.Contains(logs.String(), tt.warn) {
				t.Errorf("log lacks %q:\n%s", tt.warn, logs.String())
			}
			if out, err := g.Tool("clock_now").Run(ctx, nil, json.RawMessage(`{}`), abi.Context{}); err != nil || !strings.Contains(string(out), "12:00") {
				t.Fatalf("call: %s, %v", out, err)
			}
			if got := l.signals.take(); (len(got) > 0) != tt.signal {
				t.Errorf("first use signalled %v; want a signal: %v", got, tt.signal)
			}
			if tt.signal {
				// The list cache now holds what the guest lists.
				entries, _ := filepath.Glob(filepath.Join(dir, "lists", "*.json"))
				if len(entries) != 1 {
					t.Fatalf("list cache %v; want one entry", entries)
				}
				if b, _ := os.ReadFile(entries[0]); strings.Contains(string(b), "gone") {
					t.Errorf("corrected entry still lists gone: %s", b)
				}
			}
		})
	}
}
