package sandbox

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"

	"github.com/tetratelabs/wazero"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/wasmbin"
	"github.com/mcphost/mcphost/sandbox/internal/component"
	"github.com/mcphost/mcphost/sandbox/internal/extism"
	"github.com/mcphost/mcphost/sandbox/internal/looppoll"
	"github.com/mcphost/mcphost/sandbox/internal/rootfs"
	"github.com/mcphost/mcphost/sandbox/internal/wasip2"
)

// IsComponent reports whether wasm is a WebAssembly component (WASI 0.2)
// rather than a core module, from its header.
func IsComponent(wasm []byte) bool { return wasmbin.IsComponent(wasm) }

// componentBackend runs a WebAssembly component (sandbox/internal/component) in
// its own wazero runtime. It exports no Extism functions: its Guest
// (componentPlugin) lists its exported functions as tools and calls one
// through the canonical ABI, its arguments converted once from JSON to
// WIT values.
type componentBackend struct {
	rt     wazero.Runtime
	cp     *component.Compiled
	tools  []component.Tool
	defs   []json.RawMessage // each tool's abi.Tool JSON, in tools' order
	lim    Limits
	log    *slog.Logger
	client *http.Client
	mounts []mounted
	// poll says every core module was instrumented (looppoll): calls
	// are stopped through each instance's poll, and running ones, listed
	// in live, when the backend closes.
	poll bool
	live livePolls
}

// log carries the plugin's name; mountLog, which rootfs's warnings
// extend with it, does not.
func newComponentBackend(ctx context.Context, rc wazero.RuntimeConfig, wasm []byte, lim Limits, log, mountLog *slog.Logger, name string) (*componentBackend, map[string]signature, error) {
	c, err := component.Decode(wasm)
	if err != nil {
		return nil, nil, componentFormatError(wasm, err)
	}
	ms, err := openMounts(lim.AllowedPaths, lim.MayRequestPaths, lim.Hidden, mountLog, name)
	if err != nil {
		return nil, nil, &LoadError{Stage: "limits", Err: err}
	}
	b := &componentBackend{lim: lim, log: log, client: newEgress(name, lim, log).client(), mounts: ms}
	// Timeouts stop the guest through the loop poll, as for core modules:
	// wazero's close-on-done would start a goroutine for each core call,
	// and a tool call makes several (realloc, the export, post-return).
	b.rt = wazero.NewRuntimeWithConfig(ctx, rc.WithCloseOnContextDone(false))
	b.cp, err = component.Compile(ctx, b.rt, c, wasip2.Host(), func(wasm []byte) ([]byte, error) {
		out, _, err := looppoll.Instrument(wasm)
		return out, err
	})
	b.poll = err == nil
	if re := (*component.RewriteError)(nil); errors.As(err, &re) {
		log.Warn("loop poll unavailable: timeouts use wazero's close-on-done, which costs a goroutine per core call", "err", err)
		b.rt.Close(ctx)
		b.rt = wazero.NewRuntimeWithConfig(ctx, rc)
		b.cp, err = component.Compile(ctx, b.rt, c, wasip2.Host(), nil)
	}
	if err != nil {
		b.Close(ctx, true)
		return nil, nil, fmt.Errorf("component: %w", err)
	}
	if len(b.cp.Unprovided) > 0 {
		log.Warn("component imports interfaces this host does not provide; a call that reaches one traps",
			"imports", b.cp.Unprovided)
	}
	if len(b.cp.Missing) > len(b.cp.Unprovided) {
		log.Info("component imports functions this host does not provide; they trap if called",
			"imports", b.cp.Missing)
	}
	// What one component may make the host hold or copy is bounded by
	// the plugin's own limits (sandbox/internal/component/budget.go).
	b.cp.Limits = component.Limits{ValueBytes: int64(lim.MaxOutputBytes), HostBytes: int64(lim.MemoryPages) * pageSize}
	var skipped []component.Skipped
	b.tools, skipped, err = b.cp.Tools()
	if err != nil {
		b.Close(ctx, true)
		return nil, nil, &LoadError{Stage: "limits", Err: err}
	}
	for _, s := range skipped {
		log.Warn("component function is not a tool", "function", s.Name, "reason", s.Reason)
	}
	b.defs = make([]json.RawMessage, len(b.tools))
	for i, t := range b.tools {
		if b.defs[i], err = json.Marshal(t.Def); err != nil {
			b.Close(ctx, true)
			return nil, nil, err
		}
	}
	return b, nil, nil
}

// componentFormatError is a FormatError for a component the decoder
// refused, so that the loader names the file: malformed bytes, or a part
// of the Component Model mcphost does not implement (an
// *component.UnsupportedError, still reachable with errors.As).
func componentFormatError(wasm []byte, err error) error {
	reason := reasonMalformedComponent
	if u := (*component.UnsupportedError)(nil); errors.As(err, &u) {
		reason = reasonUnsupportedComponent
	}
	return &FormatError{Reason: reason, Detail: fmt.Sprintf("%d bytes; %v", len(wasm), err), Err: err}
}

// UnprovidedImports lists the functions a component imports from
// interfaces this host does not implement at all, named as
// "interface#function" (component.Key): a call that reaches one traps,
// so `mcphost validate` fails on them. nil for a core module.
func (m *Module) UnprovidedImports() []string {
	if b := m.component(); b != nil {
		return slices.Clone(b.cp.Unprovided)
	}
	return nil
}

func (b *componentBackend) Instantiate(ctx context.Context, _ wazero.ModuleConfig) (guest, error) {
	return b.instantiateIO(ctx, io.Discard, io.Discard, nil)
}

// instantiateIO creates an instance whose stdout and stderr go to the
// pool instance's line writers. Start functions (the guest's
// _initialize) run now. Gated mounts (may_request_paths) are behind the
// pool instance's gate, or closed without one.
func (b *componentBackend) instantiateIO(ctx context.Context, stdout, stderr io.Writer, pool *instance) (guest, error) {
	pre := make([]wasip2.Preopen, len(b.mounts))
	for i, m := range b.mounts {
		gate, held := rootfs.Gate(closedGate), (*rootfs.Handles)(nil)
		if pool != nil {
			gate, held = pool.gate(m.host), &pool.handles
		}
		pre[i] = wasip2.Preopen{Guest: m.guest, FS: m.with(gate, held), ReadOnly: m.readOnly}
	}
	w := &wasip2.State{
		Env: b.lim.Env, Config: b.lim.Config, Stdout: stdout, Stderr: stderr,
		Preopens: pre, HTTP: b.client, MaxHTTPBytes: maxHTTPBytes(b.lim), Log: b.log, KV: wasiKV(b.lim.KV),
		Refused: func(err error) bool { var r *RefusedError; return errors.As(err, &r) },
	}
	inst, err := b.cp.Instantiate(ctx, w)
	if err != nil {
		return nil, err
	}
	g := &componentGuest{b: b, inst: inst}
	if b.poll {
		if g.poll, err = newPoll(inst.Modules()...); err != nil {
			inst.Close(ctx)
			return nil, err
		}
		b.live.add(g.poll)
		// The core instances' start functions run once all are
		// instantiated, in order, bounded like a call.
		if err := runStart(ctx, g.poll, func() error { return inst.RunExports(ctx, looppoll.StartExport) }); err != nil {
			g.Close()
			return nil, err
		}
	}
	return g, nil
}

func (b *componentBackend) Close(ctx context.Context, drained bool) error {
	// Closing the runtime does not stop an instrumented guest; its poll
	// does.
	b.live.interruptAll()
	err := b.rt.Close(ctx)
	if drained && b.cp != nil {
		err = errors.Join(err, b.cp.Close(ctx))
	}
	for _, m := range b.mounts {
		m.root.Close()
	}
	b.client.CloseIdleConnections()
	return err
}

// componentGuest is one component instance.
type componentGuest struct {
	b    *componentBackend
	inst *component.Instance
	poll *poll // nil unless the backend's core modules are instrumented
}

// call refuses: a component exports no Extism functions; its Guest calls
// its tools (callTool).
func (g *componentGuest) Call(_ context.Context, export string, _ []byte) (uint32, []byte, error) {
	if g.inst.IsClosed() {
		return 0, nil, errModuleClosed
	}
	return 1, nil, fmt.Errorf("unknown function: %s (a component is called through its Guest)", export)
}

// callTool runs tool with its arguments, converted to WIT values.
func (g *componentGuest) callTool(ctx context.Context, tool *component.Tool, args []any) (uint32, []byte, error) {
	if g.inst.IsClosed() {
		return 0, nil, errModuleClosed
	}
	if g.poll != nil {
		g.poll.arm(ctx)
	}
	out, err := g.inst.CallTool(ctx, tool, args)
	if g.poll != nil {
		if code := g.poll.disarm(ctx); code != 0 {
			// Stopped wherever it was, with its interrupt set: never
			// to be used again. Its context ended before it returned,
			// so even a result is too late, as under close-on-done.
			g.inst.Close(context.Background())
			return 1, nil, interruptedError(code, cmp.Or(err, context.Cause(ctx)))
		}
	}
	if err != nil {
		// The guest broke the canonical ABI inside a host function
		// (a dead handle, a bad pointer) or passed a limit there: its
		// trap, not the host's failure.
		return 1, nil, component.Cause(err)
	}
	return 0, out, nil
}

func (g *componentGuest) GuestError() string { return "" }

func (g *componentGuest) Close() {
	if g.poll != nil {
		g.b.live.remove(g.poll)
	}
	g.inst.Close(context.Background())
}

// componentPlugin is the Guest of a component: its exported functions are
// its tools, called through their WIT types. It lists no resources,
// templates or prompts, and answers no other question.
type componentPlugin struct {
	m      *Module
	b      *componentBackend
	plugin string
}

func (g *componentPlugin) ABI() int { return 2 }

// Lists returns the tools' definitions, made from the WIT types at load.
func (g *componentPlugin) Lists(context.Context) (*Lists, error) {
	return &Lists{Tools: slices.Clone(g.b.defs)}, nil
}

// CallTool converts args to the values of the tool's parameters and
// calls its function on a pooled instance. Arguments that do not fit,
// and a tool the component does not have, are an error result (isError),
// as a guest's own refusal would be.
func (g *componentPlugin) CallTool(ctx context.Context, ref ToolRef, args json.RawMessage, _ abi.Context) (ToolResult, error) {
	t := g.b.tool(ref)
	if t == nil {
		return errorResult(fmt.Sprintf("unknown tool %q", ref.Name))
	}
	if len(args) > g.m.lim.MaxInputBytes {
		return ToolResult{}, g.m.fail(abi.ExportCallTool, KindBadInput, fmt.Sprintf("%d bytes, limit %d", len(args), g.m.lim.MaxInputBytes), nil)
	}
	vals, err := t.Args(args)
	if err != nil {
		return errorResult(err.Error())
	}
	out, _, err := g.m.run(ctx, abi.ExportCallTool, callInput{tool: t, args: vals}, false)
	if err != nil {
		return ToolResult{}, err
	}
	// The result was written by component.resultJSON: read it as any
	// tool's, in one pass.
	r, msg := extism.ReadToolResult(out)
	if msg != "" {
		return ToolResult{}, &OutputError{Plugin: g.plugin, Export: abi.ExportCallTool, Msg: msg}
	}
	return r, nil
}

// errorResult is a tool's error result (isError) saying msg.
func errorResult(msg string) (ToolResult, error) {
	out, err := component.ErrorResult(msg)
	if err != nil {
		return ToolResult{}, err
	}
	return ToolResult{JSON: out, IsError: true}, nil
}

// tool is the tool ref names: the one at its index, or, should the list
// it was resolved in not be this backend's, the one of its name.
func (b *componentBackend) tool(ref ToolRef) *component.Tool {
	if i := ref.Index; i >= 0 && i < len(b.tools) && b.tools[i].Name == ref.Name {
		return &b.tools[i]
	}
	for i := range b.tools {
		if b.tools[i].Name == ref.Name {
			return &b.tools[i]
		}
	}
	return nil
}

func (g *componentPlugin) ReadResource(context.Context, string, abi.Context) (json.RawMessage, error) {
	return nil, &UnsupportedError{Plugin: g.plugin, Export: abi.ExportReadResource}
}

func (g *componentPlugin) GetPrompt(context.Context, string, map[string]string, abi.Context) (json.RawMessage, error) {
	return nil, &UnsupportedError{Plugin: g.plugin, Export: abi.ExportGetPrompt}
}

func (g *componentPlugin) Complete(context.Context, abi.CompleteParams, abi.Context) (json.RawMessage, error) {
	return nil, &UnsupportedError{Plugin: g.plugin, Export: abi.ExportComplete}
}

// RootsListChanged does nothing: a component has no export to hear it.
func (g *componentPlugin) RootsListChanged(context.Context, abi.Context) error { return nil }
