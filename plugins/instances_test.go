package plugins

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/logtest"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/sandbox"
)

// TestInstanceModel loads real (generated) Wasm modules and checks the
// model each gets, and that a single-instance plugin's calls really share
// one instance.
func TestInstanceModel(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	one := int32(1)
	list := wfunc{name: abi.ExportListTools, output: `{"tools":[` + tool("t") + `]}`}
	callOK := wfunc{name: abi.ExportCallTool, output: `{"content":[]}`}
	plain := wasmModule(list, callOK)
	declared := wasmModule(list, callOK, wfunc{name: abi.ExportStateless, i32: &one})
	trapping := wasmModule(list, wfunc{name: abi.ExportCallTool, trap: true})
	tests := []struct {
		name       string
		wasm       []byte
		maxInst    int
		want       int
		wantReason string
		keeps      bool // KeepsState: what its instances hold is not thrown away at the tier-up
	}{
		{"foreign plugin", plain, 0, 1, "may keep state", true},
		{"declared stateless", declared, 0, 3, "declared stateless", false},
		{"override to a pool", plain, 4, 4, "max_instances = 4", true},
		{"override to one", declared, 1, 1, "max_instances = 1", false},
		{"traps", trapping, 0, 1, "may keep state", true},
	}
	cfg := config.DefaultConfig()
	cfg.Server.MaxInstances = 3
	for i, tt := range tests {
		file := filepath.Join(dir, tt.name+".wasm")
		write(t, file, string(tt.wasm))
		cfg.Plugins = append(cfg.Plugins, config.Spec{Name: "p" + string(rune('a'+i)), Path: file, MaxInstances: tt.maxInst})
	}
	log, rec := logtest.New()
	l := NewLoader(LoaderOptions{Engine: newEngine(t), Logger: log})
	g, err := l.Build(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(ctx)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := g.Plugin("p" + string(rune('a'+i)))
			if p == nil {
				t.Fatalf("not loaded: %v", g.Failed("p"+string(rune('a'+i))))
			}
			m := p.Instances()
			if m.Instances != tt.want || !strings.Contains(m.Reason, tt.wantReason) || m.KeepsState != tt.keeps {
				t.Errorf("model: got %v (keeps state %v); want %d instances because %q (keeps state %v)", m, m.KeepsState, tt.want, tt.wantReason, tt.keeps)
			}
			if got := p.core.module.(interface{ Limits() sandbox.Limits }).Limits().KeepsState; got != tt.keeps {
				t.Errorf("Limits.KeepsState: got %v; want %v", got, tt.keeps)
			}
			if got := p.core.module.(statser).Stats().Instances; got > tt.want {
				t.Errorf("live instances: got %d; want at most %d", got, tt.want)
			}
		})
	}
	// A fault on a single instance says the plugin's state was lost.
	p := g.Plugin("pe")
	if _, err := p.callTool(ctx, "t", nil, abi.Context{}, false); err == nil {
		t.Fatal("trapping call: got no error")
	}
	if got := rec.Matching("WARN plugin instance re-created after a fault: its state was lost plugin=pe"); len(got) != 1 {
		t.Errorf("log: got %q; want one state-lost warning", got)
	}
	// A guest error keeps the instance, so nothing was lost.
	if _, err := g.Plugin("pa").callTool(ctx, "nope", nil, abi.Context{}, false); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown tool: got %v", err)
	}
	if got := rec.Matching("WARN plugin instance re-created"); len(got) != 1 {
		t.Errorf("log: got %d state-lost warnings; want 1", len(got))
	}
}
