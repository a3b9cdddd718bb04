package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/cachefile"
	"github.com/mcphost/mcphost/plugins/config"
)

// TestListCacheComponent: a component listed from the list cache loads on
// its first call, once however many calls race for it, and its tools are
// then called through the component's own Guest; a question it does not
// answer says so. A cached list whose order is not the component's still
// reaches each tool by its name, and is rewritten and signalled.
func TestListCacheComponent(t *testing.T) {
	kinds := componentWasm(t, "kinds")
	ctx := context.Background()
	dir := t.TempDir()
	listDir := filepath.Join(dir, "lists")
	engine := newEngine(t)
	file := filepath.Join(dir, "kinds.wasm")
	write(t, file, string(kinds))
	cfg := config.DefaultConfig()
	cfg.Plugins = []config.Spec{{Name: "kinds", Path: file}}

	l, loads := countingLoader(t, listDir, engine)
	g, err := l.Build(ctx, cfg, nil)
	if err != nil || len(g.Failures) > 0 || loads.Load() != 1 {
		t.Fatalf("first start: %v %v, %d loads", err, g.Failures, loads.Load())
	}
	g.Close(ctx)

	greet := func(g *Generation, name string) error {
		out, err := g.Tool("kinds_greet").Run(ctx, nil, json.RawMessage(`{"name":`+mustQuote(name)+`}`), abi.Context{})
		var res abi.CallToolResult
		if err == nil && (json.Unmarshal(out, &res) != nil || len(res.Content) != 1 || res.Content[0].Text != "¡hola, "+name+"!") {
			err = errors.New("greet: " + string(out))
		}
		return err
	}
	l, loads = countingLoader(t, listDir, engine)
	g, err = l.Build(ctx, cfg, nil)
	if err != nil || loads.Load() != 0 || len(g.Plugin("kinds").Tools) != 19 || g.Plugin("kinds").ABI != 2 {
		t.Fatalf("warm start: %v, %d loads, plugin %+v; want the cached lists, unloaded", err, loads.Load(), g.Plugin("kinds"))
	}
	done := make(chan error, 4)
	for i := range 4 {
		go func() { done <- greet(g, strings.Repeat("w", i+1)) }()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Errorf("call on a lazy component: %v", err)
		}
	}
	if loads.Load() != 1 {
		t.Errorf("4 racing first calls: %d loads; want 1", loads.Load())
	}
	if _, err := g.Plugin("kinds").Read(ctx, nil, "x://y", abi.Context{}); !errors.Is(err, ErrNotSupported) {
		t.Errorf("read on a component: %v; want ErrNotSupported", err)
	}
	if got := l.signals.take(); len(got) != 0 {
		t.Errorf("lists as cached, yet signalled %v", got)
	}
	g.Close(ctx)

	// The cached tools reversed: every index is stale.
	entries, _ := filepath.Glob(filepath.Join(listDir, "*.json"))
	for _, e := range entries {
		b, _ := os.ReadFile(e)
		var entry listEntry
		if err := json.Unmarshal(b, &entry); err != nil {
			t.Fatal(err)
		}
		slices.Reverse(entry.Tools)
		b, _ = json.Marshal(entry)
		if err := os.WriteFile(e, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := cachefile.Record(e, cachefile.Sum(b)); err != nil {
			t.Fatal(err)
		}
	}
	l, _ = countingLoader(t, listDir, engine)
	g, err = l.Build(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(ctx)
	if err := greet(g, "again"); err != nil {
		t.Errorf("through a stale index: %v", err)
	}
	if got := l.signals.take(); !slices.Equal(got, []string{"kinds"}) {
		t.Errorf("lists in another order on first use: signalled %v; want [kinds]", got)
	}
}

func mustQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
