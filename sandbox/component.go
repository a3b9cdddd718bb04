package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sandbox/component"
)

// IsComponent reports whether wasm is a WebAssembly component (WASI 0.2)
// rather than a core module, from its header.
func IsComponent(wasm []byte) bool { return component.IsComponent(wasm) }

// componentBackend runs a WebAssembly component (sandbox/component) in
// its own wazero runtime. To the pool it looks like a hyper-mcp v2
// plugin: list_tools maps its exported functions to tools, call_tool
// calls one through the canonical ABI.
type componentBackend struct {
	rt     wazero.Runtime
	cp     *component.Compiled
	tools  []component.Tool
	list   []byte
	lim    Limits
	log    *slog.Logger
	client *http.Client
	mounts []component.Preopen
}

// componentExports are the plugin-ABI exports a component answers.
var componentExports = map[string]signature{
	abi.ExportListTools: {results: []api.ValueType{api.ValueTypeI32}},
	abi.ExportCallTool:  {results: []api.ValueType{api.ValueTypeI32}},
}

// log carries the plugin's name; mountLog, which rootfs's warnings
// extend with it, does not.
func newComponentBackend(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte, lim Limits, log, mountLog *slog.Logger, name string) (*componentBackend, map[string]signature, error) {
	c, err := component.Decode(wasm)
	if err != nil {
		return nil, nil, fmt.Errorf("component: %w", err)
	}
	roots, err := openMounts(lim.AllowedPaths, mountLog, name)
	if err != nil {
		return nil, nil, &LoadError{Stage: "limits", Err: err}
	}
	b := &componentBackend{rt: wazero.NewRuntimeWithConfig(ctx, rc), lim: lim, log: log, client: newEgress(name, lim, log).client()}
	for i, r := range roots {
		b.mounts = append(b.mounts, component.Preopen{Guest: lim.AllowedPaths[i].Guest, FS: r, ReadOnly: lim.AllowedPaths[i].ReadOnly})
	}
	if b.cp, err = component.Compile(ctx, b.rt, c, component.WASIHost()); err != nil {
		b.close(ctx, true)
		return nil, nil, fmt.Errorf("component: %w", err)
	}
	if len(b.cp.Missing) > 0 {
		log.Info("component imports functions this host does not provide; they trap if called",
			"imports", b.cp.Missing)
	}
	var skipped []component.Skipped
	b.tools, skipped = b.cp.Tools()
	for _, s := range skipped {
		log.Warn("component function is not a tool", "function", s.Name, "reason", s.Reason)
	}
	if b.list, err = b.cp.ListTools(); err != nil {
		b.close(ctx, true)
		return nil, nil, err
	}
	return b, maps.Clone(componentExports), nil
}

func (b *componentBackend) instantiate(ctx context.Context, _ wazero.ModuleConfig) (guest, error) {
	return b.instantiateIO(ctx, io.Discard, io.Discard)
}

// instantiateIO creates an instance whose stdout and stderr go to the
// pool instance's line writers. Start functions (the guest's
// _initialize) run now.
func (b *componentBackend) instantiateIO(ctx context.Context, stdout, stderr io.Writer) (guest, error) {
	w := &component.WASI{
		Env: b.lim.Env, Config: b.lim.Config, Stdout: stdout, Stderr: stderr,
		Preopens: slices.Clone(b.mounts), HTTP: b.client, MaxHTTPBytes: maxHTTPBytes(b.lim), Log: b.log,
		Refused: func(err error) bool { var r *RefusedError; return errors.As(err, &r) },
	}
	inst, err := b.cp.Instantiate(ctx, w)
	if err != nil {
		return nil, err
	}
	return &componentGuest{b: b, inst: inst}, nil
}

func (b *componentBackend) close(ctx context.Context, drained bool) error {
	err := b.rt.Close(ctx)
	if drained && b.cp != nil {
		err = errors.Join(err, b.cp.Close(ctx))
	}
	for _, m := range b.mounts {
		if c, ok := m.FS.(io.Closer); ok {
			c.Close()
		}
	}
	b.client.CloseIdleConnections()
	return err
}

// componentGuest is one component instance.
type componentGuest struct {
	b    *componentBackend
	inst *component.Instance
}

func (g *componentGuest) call(ctx context.Context, export string, input []byte) (uint32, []byte, error) {
	if g.inst.IsClosed() {
		return 0, nil, errModuleClosed
	}
	switch export {
	case abi.ExportListTools:
		return 0, g.b.list, nil
	case abi.ExportCallTool:
		out, err := g.inst.CallTool(ctx, g.b.tools, input)
		if t := (*component.Trap)(nil); errors.As(err, &t) {
			// The guest broke the canonical ABI inside a host function
			// (a dead handle, a bad pointer): its trap, not the host's
			// failure.
			err = t
		}
		if err != nil {
			return 1, nil, err
		}
		return 0, out, nil
	}
	return 1, nil, fmt.Errorf("unknown function: %s", export)
}

func (g *componentGuest) guestError() string { return "" }

func (g *componentGuest) close() { g.inst.Close(context.Background()) }
