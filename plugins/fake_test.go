package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/plugins/config"
)

// fake describes a native test plugin speaking the v2 (or v1) JSON ABI.
type fake struct {
	v1        bool
	tools     []string // JSON objects
	resources []string
	templates []string
	prompts   []string
	// extra exports, or overrides of the generated ones
	exports map[string]func(ctx context.Context, input []byte) ([]byte, error)
}

// fakeModule is a Module that counts calls per export and closes.
type fakeModule struct {
	Module
	mu     sync.Mutex
	calls  map[string]int
	inputs map[string][]byte // the last input per export
	closes atomic.Int32
}

func (m *fakeModule) Call(ctx context.Context, export string, input []byte) ([]byte, error) {
	m.mu.Lock()
	m.calls[export]++
	m.inputs[export] = append([]byte(nil), input...)
	m.mu.Unlock()
	return m.Module.Call(ctx, export, input)
}

func (m *fakeModule) Close(ctx context.Context) error {
	m.closes.Add(1)
	return m.Module.Close(ctx)
}

// exporter is implemented by modules that can list their exports.
type exporter interface{ Exports() []string }

func (m *fakeModule) Exports() []string { return m.Module.(exporter).Exports() }

func (m *fakeModule) count(export string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[export]
}

func (m *fakeModule) input(export string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return string(m.inputs[export])
}

func list(member string, items []string) func(context.Context, []byte) ([]byte, error) {
	return func(context.Context, []byte) ([]byte, error) {
		return []byte(`{"` + member + `":[` + strings.Join(items, ",") + `]}`), nil
	}
}

// echoCall answers call_tool (or call) with the request echoed as text.
func echoCall(_ context.Context, in []byte) ([]byte, error) {
	out, _ := json.Marshal(abi.CallToolResult{Content: []abi.Content{abi.TextContent(string(in))}})
	return out, nil
}

func (f fake) module() *fakeModule {
	ex := map[string]func(context.Context, []byte) ([]byte, error){}
	if f.v1 {
		ex[abi.ExportDescribe] = list("tools", f.tools)
		ex[abi.ExportCall] = echoCall
	} else {
		ex[abi.ExportListTools] = list("tools", f.tools)
		ex[abi.ExportCallTool] = echoCall
		if f.resources != nil {
			ex[abi.ExportListResources] = list("resources", f.resources)
		}
		if f.templates != nil {
			ex[abi.ExportListResourceTemplates] = list("resourceTemplates", f.templates)
		}
		if f.prompts != nil {
			ex[abi.ExportListPrompts] = list("prompts", f.prompts)
		}
	}
	for k, v := range f.exports {
		if v == nil {
			delete(ex, k)
		} else {
			ex[k] = v
		}
	}
	return &fakeModule{Module: NativeModule(ex), calls: map[string]int{}, inputs: map[string][]byte{}}
}

// tool returns a minimal valid tool JSON.
func tool(name string) string {
	return `{"name":"` + name + `","description":"d","inputSchema":{"type":"object"}}`
}

func resource(uri string) string { return `{"uri":"` + uri + `","name":"r"}` }
func template(uri string) string { return `{"uriTemplate":"` + uri + `","name":"t"}` }
func prompt(name string) string  { return `{"name":"` + name + `"}` }

// build builds a generation of native specs with a recording logger.
func build(t testing.TB, l *Loader, prev *Generation, specs ...config.Spec) *Generation {
	t.Helper()
	cfg := config.DefaultConfig()
	cfg.Plugins = specs
	g, err := l.Build(context.Background(), cfg, prev)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return g
}

func native(name string, m Module) config.Spec { return config.Spec{Name: name, Native: m} }

var errBoom = errors.New("boom")

func names[T any](items []T, name func(T) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = name(it)
	}
	return out
}

func toolNames(g *Generation) []string {
	return names(g.Tools, func(t *Tool) string { return t.Name })
}
