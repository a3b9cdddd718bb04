package component

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/mcphost/mcphost/sandbox/internal/guestmem"
)

// hostModule is the name of the wazero module holding a component's host
// functions (lowered imports and resource built-ins).
const hostModule = "mcphost:component"

// HostFunc implements one imported function. args are the lifted
// parameters; the result (nil when the function returns nothing) is
// lowered into the caller. An error fails the guest's call (it traps).
type HostFunc func(hc *HostCall, args []any) (any, error)

// HostCall is what a [HostFunc] is called with: the call's context, the
// calling instance, and the function's type as the guest declared it
// (enums and variants are built from it by name).
type HostCall struct {
	Ctx  context.Context
	Inst *Instance
	Type *FuncType
}

// Dropper is a host object behind a handle that holds something (an
// open file, bytes charged with [Instance.Charge]): Drop releases it when
// the guest drops the handle or the instance closes with it live.
type Dropper interface{ Drop() }

// Func is an exported function the host can call.
type Func struct {
	Name      string // the function's name, as written in WIT
	Interface string // the exported interface holding it; "" at the top level
	Type      *FuncType
	item      *funcItem
	tuple     *Type // the parameters as a tuple, for spilling
}

// Compiled is a component compiled in one wazero runtime: its core
// modules with their imports resolved and the host module. Instances are
// created from it; it is safe for concurrent use.
type Compiled struct {
	c       *Component
	rt      wazero.Runtime
	mods    []wazero.CompiledModule // by core instance; nil for bags
	host    api.Module
	funcs   []*Func
	Missing []string // imported functions no host implements: they trap when called
	// Limits bound each instance; set them before the first Instantiate.
	Limits Limits
	// Unprovided are those of Missing whose interface the host implements
	// nothing of (wasi:sockets, a vendor's own): the component
	// was built for another host. The rest are functions the host leaves
	// out of an interface it serves, such as the incoming half of
	// wasi:http that componentize-js always imports.
	Unprovided []string
}

// Key names a host function: the interface without its version, "#",
// and the function name, e.g. "wasi:cli/environment#get-environment".
func Key(iface, name string) string {
	if i := strings.IndexByte(iface, '@'); i >= 0 {
		iface = iface[:i]
	}
	return iface + "#" + name
}

// Compile compiles c's core modules in rt, each with its imports renamed
// to what the component's instances resolve them to, and instantiates the
// host module with impls (keyed by [Key]). rt must be used for nothing
// else: the host module's name is fixed. rewrite, when not nil, rewrites
// each core module before anything is compiled (the sandbox's loop poll);
// its failure is a *RewriteError.
func Compile(ctx context.Context, rt wazero.Runtime, c *Component, impls map[string]HostFunc, rewrite func([]byte) ([]byte, error)) (*Compiled, error) {
	cp := &Compiled{c: c, rt: rt, mods: make([]wazero.CompiledModule, len(c.instances))}
	code := make([][]byte, len(c.instances))
	for i, ci := range c.instances {
		if ci.module < 0 {
			continue
		}
		m := c.modules[ci.module]
		names := make([][2]string, len(m.imports))
		for k, ref := range ci.imports {
			names[k] = refName(ref)
		}
		wasm, err := rewriteImports(m.wasm, m.imports, names)
		if err != nil {
			return nil, fmt.Errorf("core module %d: %w", ci.module, err)
		}
		if rewrite != nil {
			if wasm, err = rewrite(wasm); err != nil {
				return nil, &RewriteError{Module: ci.module, Err: err}
			}
		}
		code[i] = wasm
	}
	hb := rt.NewHostModuleBuilder(hostModule)
	missing := map[string]bool{}
	for k, h := range c.host {
		params, results, fn, err := cp.hostFunc(h, impls, missing)
		if err != nil {
			return nil, err
		}
		hb.NewFunctionBuilder().WithGoModuleFunction(fn, params, results).Export("h" + strconv.Itoa(k))
	}
	served := map[string]bool{}
	for k := range impls {
		served[k[:strings.IndexByte(k, '#')+1]] = true
	}
	for k := range missing {
		cp.Missing = append(cp.Missing, k)
		if !served[k[:strings.IndexByte(k, '#')+1]] {
			cp.Unprovided = append(cp.Unprovided, k)
		}
	}
	slices.Sort(cp.Missing)
	slices.Sort(cp.Unprovided)
	host, err := hb.Instantiate(ctx)
	if err != nil {
		return nil, fmt.Errorf("host functions: %w", err)
	}
	cp.host = host
	for i, ci := range c.instances {
		if code[i] == nil {
			continue
		}
		cm, err := rt.CompileModule(ctx, code[i])
		if err != nil {
			return nil, fmt.Errorf("core module %d: %w", ci.module, err)
		}
		cp.mods[i] = cm
	}
	cp.funcs = c.exportedFuncs()
	return cp, nil
}

// RewriteError says Compile's rewrite refused a core module.
type RewriteError struct {
	Module int // index among the component's core modules
	Err    error
}

func (e *RewriteError) Error() string { return fmt.Sprintf("core module %d: %v", e.Module, e.Err) }

func (e *RewriteError) Unwrap() error { return e.Err }

func refName(ref coreRef) [2]string {
	if ref.inst < 0 {
		return [2]string{hostModule, "h" + strconv.Itoa(ref.host)}
	}
	return [2]string{"ci" + strconv.Itoa(ref.inst), ref.name}
}

// exportedFuncs lists the lifted functions c exports, at the top level
// and in exported instances, sorted by interface and name.
func (c *Component) exportedFuncs() []*Func {
	var funcs []*Func
	add := func(iface, name string, it externItem) {
		f, ok := it.v.(*funcItem)
		if !ok || f.lift == nil {
			return
		}
		funcs = append(funcs, &Func{Name: name, Interface: iface, Type: f.typ, item: f, tuple: paramTuple(f.typ)})
	}
	for name, it := range c.exports {
		switch it.sort {
		case sortFunc:
			add("", name, it)
		case sortInstance:
			for fn, x := range it.v.(*instanceItem).exports {
				if x.sort == sortFunc {
					add(name, fn, x)
				}
			}
		}
	}
	slices.SortFunc(funcs, func(a, b *Func) int {
		if c := strings.Compare(a.Interface, b.Interface); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return funcs
}

// Funcs returns the exported functions.
func (cp *Compiled) Funcs() []*Func { return cp.funcs }

// Docs returns the package-docs custom section, or nil.
func (cp *Compiled) Docs() []byte { return cp.c.docs }

// Close releases the compiled modules (not the runtime).
func (cp *Compiled) Close(ctx context.Context) error {
	var errs []error
	for _, m := range cp.mods {
		if m != nil {
			errs = append(errs, m.Close(ctx))
		}
	}
	return errors.Join(errs...)
}

// hostFunc returns the core signature and Go function of h.
func (cp *Compiled) hostFunc(h *hostFunc, impls map[string]HostFunc, missing map[string]bool) ([]api.ValueType, []api.ValueType, api.GoModuleFunc, error) {
	switch h.op {
	case canonResourceNew:
		return []api.ValueType{i32}, []api.ValueType{i32}, func(ctx context.Context, _ api.Module, stack []uint64) {
			inst := instanceOf(ctx)
			stack[0] = uint64(inst.handles.add(h.res, uint32(stack[0]), true))
		}, nil
	case canonResourceRep:
		return []api.ValueType{i32}, []api.ValueType{i32}, func(ctx context.Context, _ api.Module, stack []uint64) {
			inst := instanceOf(ctx)
			rep, ok := inst.handles.get(h.res, uint32(stack[0])).(uint32)
			if !ok {
				trap("resource.rep of handle %d, which is not one of the component's own resources", uint32(stack[0]))
			}
			stack[0] = uint64(rep)
		}, nil
	case canonResourceDrop:
		return []api.ValueType{i32}, nil, func(ctx context.Context, _ api.Module, stack []uint64) {
			inst := instanceOf(ctx)
			v := inst.handles.remove(h.res, uint32(stack[0]))
			switch x := v.(type) {
			case uint32:
				if h.res.dtor != nil {
					if _, err := inst.fn(*h.res.dtor).Call(ctx, uint64(x)); err != nil {
						panic(err)
					}
				}
			case Dropper:
				x.Drop()
			}
		}, nil
	}
	ft := h.fn.typ
	params, spill := flatParams(ft)
	results, retMem := flatResults(ft)
	np := len(params)
	if retMem {
		params = append(slices.Clone(params), i32)
		results = nil
	}
	key := Key(h.fn.iface, h.fn.name)
	impl := impls[key]
	if h.fn.lift != nil {
		// A function one component lifts and another lowers (composed
		// components): lifted from the caller, lowered into the callee
		// and back, within the one instance.
		key = "a function of another component"
		callee := &Func{Name: key, Type: ft, item: h.fn, tuple: paramTuple(ft)}
		impl = func(hc *HostCall, args []any) (any, error) {
			// A component can reach its own export again this way (a
			// table filled with it), which would recurse without end on
			// the host's stack; composition itself nests far less.
			if hc.Inst.nesting >= maxNesting {
				return nil, &Trap{Msg: fmt.Sprintf("calls from one component into another nest more than %d deep (a component calling itself back?)", maxNesting)}
			}
			hc.Inst.nesting++
			defer func() { hc.Inst.nesting-- }()
			return hc.Inst.Call(hc.Ctx, callee, args)
		}
	} else if impl == nil {
		missing[key] = true
		impl = func(*HostCall, []any) (any, error) {
			return nil, fmt.Errorf("%s is not provided by this host", key)
		}
	}
	var tuple *Type
	if spill {
		tuple = paramTuple(ft)
	}
	opts := h.opts
	return params, results, func(ctx context.Context, _ api.Module, stack []uint64) {
		defer hostPanic(key)
		inst := instanceOf(ctx)
		c := inst.cx(ctx, &opts)
		var args []any
		if spill {
			args = c.load(tuple, uint32(stack[0])).([]any)
		} else {
			args = make([]any, len(ft.Params))
			k := 0
			for j, p := range ft.Params {
				args[j] = c.liftFlat(p.Type, stack[:np], &k)
			}
		}
		res, err := impl(&HostCall{Ctx: ctx, Inst: inst, Type: ft}, args)
		if err != nil {
			panic(err)
		}
		c.newCrossing()
		switch {
		case ft.Result == nil:
		case retMem:
			c.store(ft.Result, res, uint32(stack[np]))
		default:
			c.lowerFlat(ft.Result, res, stack[:0])
		}
	}, nil
}

// hostPanic, deferred in a host function, turns a Go runtime error —
// a value of another type than the host expects, which a component
// causes by declaring an import with a type other than the interface's —
// into a trap that says so in words, not in Go's (wazero would add the
// Go stack).
func hostPanic(name string) {
	r := recover()
	if r == nil {
		return
	}
	if _, ok := r.(*runtime.TypeAssertionError); ok {
		panic(&Trap{Msg: name + ": the component declares this import with a type other than the one this host implements"})
	}
	if _, ok := r.(runtime.Error); ok {
		panic(&Trap{Msg: name + ": the host function failed (an internal error of mcphost; please report it)"})
	}
	panic(r)
}

// maxNesting bounds calls from one component into another running at
// once in an instance.
const maxNesting = 100

// instanceKey finds the component instance of a call in a host
// function's ctx.
type instanceKey struct{}

func instanceOf(ctx context.Context) *Instance {
	inst, ok := ctx.Value(instanceKey{}).(*Instance)
	if !ok {
		panic(errors.New("component host function called outside a call"))
	}
	return inst
}

// Instance is one instance of a compiled component: its core module
// instances and its handle table. It serves one call at a time.
type Instance struct {
	cp      *Compiled
	mods    []api.Module
	handles handles
	mem     hostMem // what the host holds for the guest (Limits.HostBytes)
	fns     map[coreRef]api.Function
	nesting int // calls from one component into another now running
	// State is the host's per-instance state (WASI), set by the caller
	// before any guest code runs.
	State any
}

// Instantiate creates an instance: each core instance in order, its
// imports resolved to the instances before it and to the host module.
// Start functions (wit-component's fixups, which run the guest's
// _initialize) run now, bounded by ctx, unless the compile's rewrite moved
// them into exports (see [Instance.RunExports]). state becomes
// Instance.State.
func (cp *Compiled) Instantiate(ctx context.Context, state any) (*Instance, error) {
	inst := &Instance{cp: cp, mods: make([]api.Module, len(cp.c.instances)), fns: make(map[coreRef]api.Function), State: state}
	inst.mem.limit = cp.Limits.hostBytes()
	inst.handles.mem = &inst.mem
	ctx = context.WithValue(ctx, instanceKey{}, inst)
	ctx, mems := guestmem.With(ctx)
	guestmem.UnmapWith(inst, mems) // every call goes through inst
	ctx = experimental.WithImportResolver(ctx, func(name string) api.Module {
		// The host module is found by its name (wazero wants its own
		// instance type from a resolver, which host modules are not).
		if i, err := strconv.Atoi(strings.TrimPrefix(name, "ci")); err == nil && i >= 0 && i < len(inst.mods) {
			return inst.mods[i]
		}
		return nil
	})
	for i, cm := range cp.mods {
		if cm == nil {
			continue
		}
		mod, err := cp.rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName("").WithStartFunctions())
		if err != nil {
			inst.Close(context.Background())
			return nil, fmt.Errorf("core instance %d: %w", i, err)
		}
		inst.mods[i] = mod
	}
	return inst, nil
}

// RunExports calls, in the order of the core instances, the export
// called name (a function taking and returning nothing) of every core
// instance that has one, as a call of inst: the start functions a
// rewriter moved out of instantiation run here, where the caller can
// bound them.
func (inst *Instance) RunExports(ctx context.Context, name string) error {
	ctx = context.WithValue(ctx, instanceKey{}, inst)
	for i, m := range inst.mods {
		if m == nil {
			continue
		}
		if f := m.ExportedFunction(name); f != nil {
			if _, err := f.Call(ctx); err != nil {
				return fmt.Errorf("core instance %d: %s: %w", i, name, err)
			}
		}
	}
	return nil
}

// Close closes the core module instances.
func (inst *Instance) Close(ctx context.Context) {
	for _, m := range inst.mods {
		if m != nil {
			m.Close(ctx)
		}
	}
	inst.handles.closeAll()
}

// Modules returns the core module instances, in the order of the
// component's core instance sections.
func (inst *Instance) Modules() []api.Module {
	var out []api.Module
	for _, m := range inst.mods {
		if m != nil {
			out = append(out, m)
		}
	}
	return out
}

// IsClosed reports whether a core instance was closed (a timeout or an
// exit closes the one running).
func (inst *Instance) IsClosed() bool {
	for _, m := range inst.mods {
		if m != nil && m.IsClosed() {
			return true
		}
	}
	return false
}

// Memory returns the memory exported by the first core instance that
// exports one named "memory" (the guest's main memory), or nil.
func (inst *Instance) Memory() api.Memory {
	for _, m := range inst.mods {
		if m != nil {
			if mem := m.ExportedMemory("memory"); mem != nil {
				return mem
			}
		}
	}
	return nil
}

func (inst *Instance) fn(ref coreRef) api.Function {
	f, ok := inst.fns[ref]
	if ok {
		return f
	}
	if ref.inst < 0 {
		f = inst.cp.host.ExportedFunction(refName(ref)[1])
	} else if m := inst.mods[ref.inst]; m != nil {
		f = m.ExportedFunction(ref.name)
	}
	if f == nil {
		trap("core function %q of instance %d does not exist", ref.name, ref.inst)
	}
	inst.fns[ref] = f
	return f
}

func (inst *Instance) cx(ctx context.Context, o *canonOpts) *cx {
	c := &cx{ctx: ctx, inst: inst, utf16: o.utf16, budget: budget{limit: inst.cp.Limits.valueBytes()}}
	if o.memory != nil {
		if m := inst.mods[o.memory.inst]; m != nil {
			c.mem = m.ExportedMemory(o.memory.name)
		}
	}
	if o.realloc != nil {
		c.realloc = inst.fn(*o.realloc)
	}
	return c
}

// Call calls f with args (Go values as [Case] documents) and returns its
// result, nil when it has none. A failure of the canonical ABI is a
// *Trap; a failure of the guest is wazero's error.
func (inst *Instance) Call(ctx context.Context, f *Func, args []any) (res any, err error) {
	ctx = context.WithValue(ctx, instanceKey{}, inst)
	defer func() {
		if r := recover(); r != nil {
			// A *Trap, a limit or the call's end is the guest's doing;
			// anything else is a bug of this package, which must fail
			// the call, not the server.
			switch x := r.(type) {
			case *Trap, *ValueBudgetError, *HostMemoryError, *stopped:
				err = r.(error)
			case error:
				if _, ok := x.(runtime.Error); ok {
					// Go's text names this package's types: not for users.
					err = fmt.Errorf("%s: the canonical ABI failed on this call (an internal error of mcphost; please report it)", f.Name)
				} else {
					err = fmt.Errorf("%s: %w", f.Name, x)
				}
			default:
				err = fmt.Errorf("%s: the canonical ABI failed on this call (an internal error of mcphost; please report it)", f.Name)
			}
		}
	}()
	if len(args) != len(f.Type.Params) {
		return nil, fmt.Errorf("%s takes %d arguments, got %d", f.Name, len(f.Type.Params), len(args))
	}
	c := inst.cx(ctx, f.item.lift)
	core := inst.fn(f.item.core)
	params, spill := flatParams(f.Type)
	results, retMem := flatResults(f.Type)
	stack := make([]uint64, 0, max(len(params), len(results), 1))
	if spill {
		ptr := c.alloc(f.tuple.layout.align, f.tuple.layout.size)
		c.store(f.tuple, args, ptr)
		stack = append(stack, uint64(ptr))
	} else {
		for k, p := range f.Type.Params {
			stack = c.lowerFlat(p.Type, args[k], stack)
		}
	}
	stack = stack[:cap(stack)]
	if err := core.CallWithStack(ctx, stack); err != nil {
		return nil, err
	}
	c.newCrossing()
	if f.Type.Result != nil {
		if retMem {
			res = c.load(f.Type.Result, uint32(stack[0]))
		} else {
			k := 0
			res = c.liftFlat(f.Type.Result, stack[:len(results)], &k)
		}
	}
	if pr := f.item.lift.postReturn; pr != nil {
		if err := inst.fn(*pr).CallWithStack(ctx, stack[:max(len(results), 1)]); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// handles is an instance's handle table. Index 0 is never used.
type handles struct {
	slots []handle
	free  []uint32
	mem   *hostMem // charged handleBytes for each live handle
}

type handle struct {
	res   *Resource
	v     any
	own   bool
	live  bool
	bytes int64 // charged to the instance while the handle lives
}

func (h *handles) add(res *Resource, v any, own bool) uint32 {
	n := handleBytes + objectBytes(v)
	if h.mem != nil {
		h.mem.charge("a handle", n)
	}
	if len(h.slots) == 0 {
		h.slots = append(h.slots, handle{})
	}
	if k := len(h.free); k > 0 {
		i := h.free[k-1]
		h.free = h.free[:k-1]
		h.slots[i] = handle{res: res, v: v, own: own, live: true, bytes: n}
		return i
	}
	if len(h.slots) >= maxHandles {
		trap("more than %d live handles", maxHandles)
	}
	h.slots = append(h.slots, handle{res: res, v: v, own: own, live: true, bytes: n})
	return uint32(len(h.slots) - 1)
}

// maxHandles bounds one instance's handle table.
const maxHandles = 1 << 20

func (h *handles) lookup(res *Resource, i uint32) *handle {
	if int(i) >= len(h.slots) || !h.slots[i].live {
		trap("handle %d is not live", i)
	}
	s := &h.slots[i]
	if s.res != res && !(s.res.Name == res.Name && s.res.Interface == res.Interface) {
		trap("handle %d is a %s, not a %s", i, s.res.Name, res.Name)
	}
	return s
}

func (h *handles) get(res *Resource, i uint32) any { return h.lookup(res, i).v }

func (h *handles) remove(res *Resource, i uint32) any {
	s := h.lookup(res, i)
	v, n := s.v, s.bytes
	*s = handle{}
	h.free = append(h.free, i)
	if h.mem != nil {
		h.mem.release(n)
	}
	return v
}

func (h *handles) closeAll() {
	for i := range h.slots {
		if d, ok := h.slots[i].v.(Dropper); ok && h.slots[i].live {
			d.Drop()
		}
	}
	h.slots, h.free = nil, nil
	if h.mem != nil {
		h.mem.used = 0
	}
}

func (c *cx) liftHandle(t *Type, h uint32) any {
	if t.Kind == Own {
		return c.inst.handles.remove(t.Resource, h)
	}
	return c.inst.handles.get(t.Resource, h)
}

func (c *cx) lowerHandle(t *Type, v any) uint32 {
	return c.inst.handles.add(t.Resource, v, t.Kind == Own)
}
