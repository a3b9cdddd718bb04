package component

import (
	"errors"
	"fmt"

	"github.com/mcphost/mcphost/internal/wasmbin"
)

// IsComponent reports whether wasm starts with a component's header
// (version 0x0d, layer 1) rather than a core module's (version 1, layer 0).
func IsComponent(wasm []byte) bool { return wasmbin.IsComponent(wasm) }

// UnsupportedError names a feature of the Component Model the loader
// does not implement; the component is refused.
type UnsupportedError struct {
	Feature string
}

func (e *UnsupportedError) Error() string { return "unsupported: " + e.Feature }

func unsupported(format string, args ...any) error {
	return &UnsupportedError{Feature: fmt.Sprintf(format, args...)}
}

// Sorts of the component binary format.
const (
	sortCore      = 0x00
	sortFunc      = 0x01
	sortValue     = 0x02
	sortType      = 0x03
	sortComponent = 0x04
	sortInstance  = 0x05

	coreSortFunc   = 0x00
	coreSortTable  = 0x01
	coreSortMemory = 0x02
	coreSortGlobal = 0x03
	coreSortType   = 0x10
	coreSortModule = 0x11
	coreSortInst   = 0x12
)

// coreRef names one core item: the export name of a module instance, or
// one of the component's host functions (inst -1).
type coreRef struct {
	inst int
	name string
	host int
}

// coreModule is one embedded core module.
type coreModule struct {
	wasm    []byte
	imports []coreImport
}

// coreInstance is a module instantiation (module ≥ 0) or a bag of
// exports (module -1).
type coreInstance struct {
	module  int
	imports []coreRef // module instantiations: what each import of the module resolves to
	bag     map[string]coreItem
}

type coreItem struct {
	sort byte
	ref  coreRef
}

// funcItem is a component function: imported (from the instance named
// iface, or the top level when iface is "") or lifted from core code.
type funcItem struct {
	iface, name string
	typ         *FuncType
	lift        *canonOpts // nil for an import
	core        coreRef    // the lifted core function
}

// canonOpts are a canon lift's or lower's options.
type canonOpts struct {
	utf16      bool
	memory     *coreRef
	realloc    *coreRef
	postReturn *coreRef
}

// instanceItem is a component instance: imported (typ set) or a bag of
// exports.
type instanceItem struct {
	name    string
	typ     *instanceType
	exports map[string]externItem
}

type externItem struct {
	sort byte
	v    any // *funcItem, a type (*Type, *Resource, *FuncType, …), *instanceItem
}

// hostFunc is a core function the host provides: a lowered import or a
// resource built-in.
type hostFunc struct {
	op   byte // canonLower, canonResourceNew, canonResourceDrop, canonResourceRep
	fn   *funcItem
	opts canonOpts
	res  *Resource
}

const (
	canonLift         = 0x00
	canonLower        = 0x01
	canonResourceNew  = 0x02
	canonResourceDrop = 0x03
	canonResourceRep  = 0x04
)

// space is a component's index spaces while it is decoded.
type space struct {
	parent *space
	c      *Component // the top-level component, which collects code
	args   map[string]externItem

	types      []any
	funcs      []*funcItem
	instances  []*instanceItem
	components []*template
	coreFuncs  []coreRef
	coreTables []coreRef
	coreMems   []coreRef
	coreGlobs  []coreRef
	coreMods   []int
	coreInsts  []int
	exports    map[string]externItem
}

// Component is a decoded component, ready to be instantiated.
type Component struct {
	modules   []*coreModule
	instances []*coreInstance
	host      []*hostFunc
	exports   map[string]externItem
	imports   []string // instance and function imports, by name
	docs      []byte   // the package-docs custom section

	instantiations int // nested components instantiated so far
	applied        int // bytes of sections resolved so far
	compiled       int // bytes of core modules instantiated so far
	maxCompiled    int // the bound on compiled
}

// maxDepth bounds nested components and types, which hostile input could
// nest without end.
const maxDepth = 64

// Bounds on what instantiating nested components may cost. Each
// instantiation of a nested component makes its own core instances, as
// the Component Model says, so a component that instantiates a child
// twice at each of n levels asks for 2ⁿ of them; these refuse it long
// before that costs anything.
const (
	maxInstantiations = 1000     // nested component instantiations in one component
	maxApplied        = 16 << 20 // bytes of sections resolved over all of them
)

// template is one component's sections, read once: its core modules
// parsed and added to the Component, its nested components' templates
// built, and every other section kept as bytes, resolved against the
// index spaces of each instantiation ([space.apply]). Nothing is
// decoded twice however often a nested component is instantiated.
type template struct {
	sections []tsection
}

type tsection struct {
	id     byte
	off    int    // of body in the whole binary
	body   []byte // custom, core module and component sections: nil
	module int    // core module: its index in Component.modules
	comp   *template
}

// Decode walks a component's sections and resolves its index spaces. A
// feature the loader does not implement is refused with an
// *UnsupportedError naming it.
func Decode(wasm []byte) (*Component, error) {
	switch wasmbin.KindOf(wasm) {
	case wasmbin.NotWasm:
		return nil, errors.New("not a WebAssembly binary")
	case wasmbin.Module, wasmbin.Unknown:
		return nil, fmt.Errorf("not a component: version and layer are % x, want 0d 00 01 00", wasm[4:8])
	}
	c := &Component{maxCompiled: 2*len(wasm) + 64<<20}
	t, err := c.template(&reader{B: wasm[8:], Off: 8}, 0)
	if err != nil {
		return nil, err
	}
	s := &space{c: c}
	if err := s.apply(t, 0); err != nil {
		if u := (*UnsupportedError)(nil); errors.As(err, &u) && u.Feature == featureComponentTypes &&
			len(c.modules) == 0 && len(s.components) == 0 {
			// Types and nothing else: what `wasm-tools component wit
			// --wasm` and wit-component write for a WIT package.
			return nil, unsupported("a WIT package in binary form (types, no code): it describes components and is not one; " +
				"build a component from it (cargo component, componentize-js, jco new)")
		}
		return nil, err
	}
	c.exports = s.exports
	return c, nil
}

// template reads the sections of one component (nested when depth > 0).
func (c *Component) template(r *reader, depth int) (*template, error) {
	if depth > maxDepth {
		return nil, unsupported("components nested more than %d deep", maxDepth)
	}
	t := &template{}
	what := "component"
	if depth > 0 {
		what = "nested component"
	}
	for !r.Done() {
		sec, err := r.Section()
		id, start, body := sec.ID, sec.Off, sec.Body
		if e := (*wasmbin.Error)(nil); errors.As(err, &e) && errors.Is(e, errEOF) {
			return nil, fmt.Errorf("%s at byte %d: its size, %d bytes, runs past the end of the %s (the file is cut short)",
				sectionName(id), start, sec.Size, what)
		}
		if err != nil {
			return nil, err
		}
		ts := tsection{id: id, off: start}
		sr := &reader{B: body, Off: start}
		switch id {
		case 0:
			err = c.custom(sr, depth > 0)
		case 1:
			ts.module, err = c.coreModule(sr)
		case 3:
			err = unsupported("core type sections (module types)")
		case 4:
			if !IsComponent(body) {
				err = errors.New("a nested component without a component's header")
				break
			}
			ts.comp, err = c.template(&reader{B: body[8:], Off: start + 8}, depth+1)
		case 9:
			err = unsupported("component start functions")
		case 12:
			err = unsupported("component value sections")
		case 2, 5, 6, 7, 8, 10, 11:
			ts.body = body
		default:
			err = fmt.Errorf("unknown section id %d", id)
		}
		if err != nil {
			return nil, fmt.Errorf("%s at byte %d: %w", sectionName(id), start, err)
		}
		if id != 0 {
			t.sections = append(t.sections, ts)
		}
	}
	return t, nil
}

// custom reads a custom section: package-docs, at the top level, holds
// the doc comments.
func (c *Component) custom(r *reader, nested bool) error {
	name, err := r.Name()
	if err != nil {
		return err
	}
	if name == "package-docs" && !nested {
		c.docs = r.B[r.Pos:]
	}
	r.Pos = len(r.B)
	return nil
}

// apply resolves the sections of t in s: one instantiation of t (the
// top-level component, or a nested one bound to s.args).
func (s *space) apply(t *template, depth int) error {
	s.exports = make(map[string]externItem)
	for _, ts := range t.sections {
		switch ts.id {
		case 1:
			s.coreMods = append(s.coreMods, ts.module)
			continue
		case 4:
			s.components = append(s.components, ts.comp)
			continue
		}
		if s.c.applied += len(ts.body); s.c.applied > maxApplied {
			return unsupported("nested components whose instantiations resolve more than %d MiB of sections", maxApplied>>20)
		}
		sr := &reader{B: ts.body, Off: ts.off}
		if err := s.section(ts.id, sr, depth); err != nil {
			return fmt.Errorf("%s at byte %d: %w", sectionName(ts.id), ts.off, err)
		}
		if !sr.Done() {
			return fmt.Errorf("%s at byte %d: %d bytes left over after its last item", sectionName(ts.id), ts.off, sr.Left())
		}
	}
	return nil
}

// sectionNames name the sections of the component binary format.
var sectionNames = [...]string{"custom", "core module", "core instance", "core type", "component", "instance",
	"alias", "type", "canonical function", "start", "import", "export", "value"}

// sectionName names section id in words, with its number.
func sectionName(id byte) string {
	if int(id) < len(sectionNames) {
		return fmt.Sprintf("the %s section (id %d)", sectionNames[id], id)
	}
	return fmt.Sprintf("section id %d", id)
}

// nested reports whether s is a component nested inside another.
func (s *space) nested() bool { return s.parent != nil }

func (s *space) section(id byte, r *reader, depth int) error {
	switch id {
	case 2:
		return s.vec(r, "core instance", s.coreInstance)
	case 5:
		return s.vec(r, "instance", func(r *reader) error { return s.instance(r, depth) })
	case 6:
		return s.vec(r, "alias", s.alias)
	case 7:
		return s.vec(r, "type", func(r *reader) error {
			t, err := s.defType(r, s, 0)
			if err != nil {
				return err
			}
			s.types = append(s.types, t)
			return nil
		})
	case 8:
		return s.vec(r, "canonical function", s.canon)
	case 10:
		return s.vec(r, "import", s.importDecl)
	case 11:
		return s.vec(r, "export", s.export)
	}
	return fmt.Errorf("unknown section id %d", id)
}

// vec reads a vector of items of kind, each with f; an error names the
// item by its place.
func (s *space) vec(r *reader, kind string, f func(*reader) error) error {
	n, err := r.Count()
	if err != nil {
		return fmt.Errorf("the count of items: %w", err)
	}
	for i := range n {
		if err := f(r); err != nil {
			return fmt.Errorf("%s %d of %d: %w", kind, i, n, err)
		}
	}
	return nil
}

// coreModule reads a core module section once: its imports, and its
// bytes for Compile.
func (c *Component) coreModule(r *reader) (int, error) {
	m := &coreModule{wasm: r.B}
	imports, err := moduleImports(r.B)
	if err != nil {
		return 0, fmt.Errorf("core module %d: %w", len(c.modules), err)
	}
	m.imports = imports
	r.Pos = len(r.B)
	c.modules = append(c.modules, m)
	return len(c.modules) - 1, nil
}

func (s *space) coreInstance(r *reader) error {
	tag, err := r.Byte()
	if err != nil {
		return err
	}
	idx := len(s.c.instances)
	switch tag {
	case 0x00:
		mi, err := r.U32()
		if err != nil {
			return err
		}
		if int(mi) >= len(s.coreMods) {
			return r.Errorf("core module %d out of range", mi)
		}
		m := s.c.modules[s.coreMods[mi]]
		// Compile compiles each instantiation of a module on its own.
		if s.c.compiled += len(m.wasm); s.c.compiled > s.c.maxCompiled {
			return unsupported("core modules instantiated over and over: %d MiB of code to compile, more than twice the component's size and 64 MiB",
				s.c.compiled>>20)
		}
		n, err := r.Count()
		if err != nil {
			return err
		}
		args := make(map[string]int, n)
		for range n {
			name, err := r.Name()
			if err != nil {
				return err
			}
			if sort, err := r.Byte(); err != nil {
				return err
			} else if sort != coreSortInst {
				return r.Errorf("instantiation argument %q of sort 0x%02x, want a core instance", name, sort)
			}
			ii, err := r.U32()
			if err != nil {
				return err
			}
			if int(ii) >= len(s.coreInsts) {
				return r.Errorf("core instance %d out of range", ii)
			}
			args[name] = s.coreInsts[ii]
		}
		inst := &coreInstance{module: s.coreMods[mi]}
		for _, im := range m.imports {
			src, ok := args[im.module]
			if !ok {
				return fmt.Errorf("core instance %d: module import %q.%q: no instance given for %q", idx, im.module, im.name, im.module)
			}
			ref, err := s.c.coreExport(src, im.name, im.kind)
			if err != nil {
				return fmt.Errorf("core instance %d: import %q.%q: %w", idx, im.module, im.name, err)
			}
			inst.imports = append(inst.imports, ref)
		}
		s.c.instances = append(s.c.instances, inst)
	case 0x01:
		n, err := r.Count()
		if err != nil {
			return err
		}
		bag := make(map[string]coreItem, n)
		for range n {
			name, err := r.Name()
			if err != nil {
				return err
			}
			sort, err := r.Byte()
			if err != nil {
				return err
			}
			i, err := r.U32()
			if err != nil {
				return err
			}
			ref, err := s.coreIndex(sort, i)
			if err != nil {
				return fmt.Errorf("core instance %d: export %q: %w", idx, name, err)
			}
			bag[name] = coreItem{sort: sort, ref: ref}
		}
		s.c.instances = append(s.c.instances, &coreInstance{module: -1, bag: bag})
	default:
		return r.Errorf("unknown core instance tag 0x%02x", tag)
	}
	s.coreInsts = append(s.coreInsts, idx)
	return nil
}

// coreExport resolves export name of core instance inst.
func (c *Component) coreExport(inst int, name string, sort byte) (coreRef, error) {
	ci := c.instances[inst]
	if ci.module >= 0 {
		return coreRef{inst: inst, name: name}, nil
	}
	it, ok := ci.bag[name]
	if !ok {
		return coreRef{}, fmt.Errorf("core instance %d exports no %q", inst, name)
	}
	if it.sort != sort {
		return coreRef{}, fmt.Errorf("core instance %d: %q is of sort 0x%02x, want 0x%02x", inst, name, it.sort, sort)
	}
	return it.ref, nil
}

func (s *space) coreSpace(sort byte) (*[]coreRef, error) {
	switch sort {
	case coreSortFunc:
		return &s.coreFuncs, nil
	case coreSortTable:
		return &s.coreTables, nil
	case coreSortMemory:
		return &s.coreMems, nil
	case coreSortGlobal:
		return &s.coreGlobs, nil
	}
	return nil, unsupported("core items of sort 0x%02x in instances", sort)
}

func (s *space) coreIndex(sort byte, i uint32) (coreRef, error) {
	sp, err := s.coreSpace(sort)
	if err != nil {
		return coreRef{}, err
	}
	if int(i) >= len(*sp) {
		return coreRef{}, fmt.Errorf("core item %d of sort 0x%02x out of range", i, sort)
	}
	return (*sp)[i], nil
}

// sort reads a component sort; core sorts come back as 0x100|coreSort.
func readSort(r *reader) (int, error) {
	b, err := r.Byte()
	if err != nil {
		return 0, err
	}
	if b == sortCore {
		cs, err := r.Byte()
		return 0x100 | int(cs), err
	}
	return int(b), nil
}

func (s *space) alias(r *reader) error {
	sort, err := readSort(r)
	if err != nil {
		return err
	}
	tag, err := r.Byte()
	if err != nil {
		return err
	}
	switch tag {
	case 0x00: // export of a component instance
		ii, err := r.U32()
		if err != nil {
			return err
		}
		name, err := r.Name()
		if err != nil {
			return err
		}
		if int(ii) >= len(s.instances) {
			return r.Errorf("instance %d out of range", ii)
		}
		it, err := s.instances[ii].export(name)
		if err != nil {
			return err
		}
		if int(it.sort) != sort {
			return fmt.Errorf("alias of %q: sort %d, want %d", name, it.sort, sort)
		}
		return s.push(it)
	case 0x01: // export of a core instance
		ii, err := r.U32()
		if err != nil {
			return err
		}
		name, err := r.Name()
		if err != nil {
			return err
		}
		if sort < 0x100 {
			return r.Errorf("core export alias of a non-core sort")
		}
		if int(ii) >= len(s.coreInsts) {
			return r.Errorf("core instance %d out of range", ii)
		}
		ref, err := s.c.coreExport(s.coreInsts[ii], name, byte(sort&0xff))
		if err != nil {
			return err
		}
		sp, err := s.coreSpace(byte(sort & 0xff))
		if err != nil {
			return err
		}
		*sp = append(*sp, ref)
		return nil
	case 0x02: // outer
		ct, err := r.U32()
		if err != nil {
			return err
		}
		idx, err := r.U32()
		if err != nil {
			return err
		}
		o := s
		for range ct {
			if o = o.parent; o == nil {
				return r.Errorf("outer alias %d levels out", ct)
			}
		}
		switch sort {
		case sortType:
			if int(idx) >= len(o.types) {
				return r.Errorf("outer type %d out of range", idx)
			}
			s.types = append(s.types, o.types[idx])
		case sortComponent:
			if int(idx) >= len(o.components) {
				return r.Errorf("outer component %d out of range", idx)
			}
			s.components = append(s.components, o.components[idx])
		case 0x100 | coreSortModule:
			if int(idx) >= len(o.coreMods) {
				return r.Errorf("outer core module %d out of range", idx)
			}
			s.coreMods = append(s.coreMods, o.coreMods[idx])
		default:
			return unsupported("outer aliases of sort %d", sort)
		}
		return nil
	}
	return r.Errorf("unknown alias target 0x%02x", tag)
}

// export returns the export name of inst.
func (inst *instanceItem) export(name string) (externItem, error) {
	if inst.typ != nil {
		v, ok := inst.typ.exports[name]
		if !ok {
			return externItem{}, fmt.Errorf("instance %q exports no %q", inst.name, name)
		}
		if ft, ok := v.(*FuncType); ok {
			return externItem{sort: sortFunc, v: &funcItem{iface: inst.name, name: name, typ: ft}}, nil
		}
		return externItem{sort: sortType, v: v}, nil
	}
	it, ok := inst.exports[name]
	if !ok {
		return externItem{}, fmt.Errorf("instance exports no %q", name)
	}
	return it, nil
}

// push adds an item to the index space of its sort.
func (s *space) push(it externItem) error {
	switch it.sort {
	case sortFunc:
		s.funcs = append(s.funcs, it.v.(*funcItem))
	case sortType:
		s.types = append(s.types, it.v)
	case sortInstance:
		s.instances = append(s.instances, it.v.(*instanceItem))
	default:
		return unsupported("items of sort %d", it.sort)
	}
	return nil
}

// item returns index i of sort as an externItem.
// sortIdx reads a sortidx (a sort, then an index into it) and returns
// the item it names.
func (s *space) sortIdx(r *reader) (externItem, error) {
	sort, err := readSort(r)
	if err != nil {
		return externItem{}, err
	}
	i, err := r.U32()
	if err != nil {
		return externItem{}, err
	}
	return s.item(sort, i)
}

func (s *space) item(sort int, i uint32) (externItem, error) {
	switch sort {
	case sortFunc:
		if int(i) < len(s.funcs) {
			return externItem{sort: sortFunc, v: s.funcs[i]}, nil
		}
	case sortType:
		if int(i) < len(s.types) {
			return externItem{sort: sortType, v: s.types[i]}, nil
		}
	case sortInstance:
		if int(i) < len(s.instances) {
			return externItem{sort: sortInstance, v: s.instances[i]}, nil
		}
	default:
		return externItem{}, unsupported("items of sort %d in exports and instantiations", sort)
	}
	return externItem{}, fmt.Errorf("item %d of sort %d out of range", i, sort)
}

func (s *space) instance(r *reader, depth int) error {
	tag, err := r.Byte()
	if err != nil {
		return err
	}
	n := 0
	var ci uint32
	if tag == 0x00 {
		if ci, err = r.U32(); err != nil {
			return err
		}
	} else if tag != 0x01 {
		return r.Errorf("unknown instance tag 0x%02x", tag)
	}
	if n, err = r.Count(); err != nil {
		return err
	}
	items := make(map[string]externItem, n)
	for range n {
		var name string
		if tag == 0x00 {
			name, err = r.Name()
		} else {
			name, err = externName(r)
		}
		if err != nil {
			return err
		}
		it, err := s.sortIdx(r)
		if err != nil {
			return fmt.Errorf("instance item %q: %w", name, err)
		}
		items[name] = it
	}
	if tag == 0x01 {
		s.instances = append(s.instances, &instanceItem{exports: items})
		return nil
	}
	if int(ci) >= len(s.components) {
		return r.Errorf("component %d out of range", ci)
	}
	// Instantiate a nested component: resolve its sections, read once
	// into its template, with its imports bound to the arguments.
	if s.c.instantiations++; s.c.instantiations > maxInstantiations {
		return unsupported("more than %d instantiations of nested components", maxInstantiations)
	}
	ns := &space{parent: s, c: s.c, args: items}
	if err := ns.apply(s.components[ci], depth+1); err != nil {
		return fmt.Errorf("nested component %d: %w", ci, err)
	}
	s.instances = append(s.instances, &instanceItem{exports: ns.exports})
	return nil
}

func (s *space) canon(r *reader) error {
	op, err := r.Byte()
	if err != nil {
		return err
	}
	switch op {
	case canonLift:
		if b, err := r.Byte(); err != nil || b != 0x00 {
			return r.Errorf("canon lift: bad encoding")
		}
		cf, err := r.U32()
		if err != nil {
			return err
		}
		opts, err := s.canonOpts(r)
		if err != nil {
			return err
		}
		ti, err := r.U32()
		if err != nil {
			return err
		}
		if int(cf) >= len(s.coreFuncs) || int(ti) >= len(s.types) {
			return r.Errorf("canon lift: index out of range")
		}
		ft, ok := s.types[ti].(*FuncType)
		if !ok {
			return r.Errorf("canon lift: type %d is not a function type", ti)
		}
		s.funcs = append(s.funcs, &funcItem{typ: ft, lift: &opts, core: s.coreFuncs[cf]})
	case canonLower:
		if b, err := r.Byte(); err != nil || b != 0x00 {
			return r.Errorf("canon lower: bad encoding")
		}
		fi, err := r.U32()
		if err != nil {
			return err
		}
		opts, err := s.canonOpts(r)
		if err != nil {
			return err
		}
		if int(fi) >= len(s.funcs) {
			return r.Errorf("canon lower: function %d out of range", fi)
		}
		f := s.funcs[fi]
		s.addHost(&hostFunc{op: op, fn: f, opts: opts})
	case canonResourceNew, canonResourceDrop, canonResourceRep:
		ti, err := r.U32()
		if err != nil {
			return err
		}
		if int(ti) >= len(s.types) {
			return r.Errorf("resource type %d out of range", ti)
		}
		res, ok := s.types[ti].(*Resource)
		if !ok {
			return r.Errorf("type %d is not a resource", ti)
		}
		if op != canonResourceDrop && !res.local {
			return r.Errorf("resource.new or resource.rep of type %d, a resource the component imports (only its own resources have a representation)", ti)
		}
		s.addHost(&hostFunc{op: op, res: res})
	default:
		return unsupported("canonical built-in 0x%02x (async, threads or error-context)", op)
	}
	return nil
}

func (s *space) addHost(h *hostFunc) {
	s.coreFuncs = append(s.coreFuncs, coreRef{inst: -1, host: len(s.c.host)})
	s.c.host = append(s.c.host, h)
}

func (s *space) canonOpts(r *reader) (canonOpts, error) {
	var o canonOpts
	n, err := r.Count()
	if err != nil {
		return o, err
	}
	for range n {
		b, err := r.Byte()
		if err != nil {
			return o, err
		}
		switch b {
		case 0x00: // utf8
		case 0x01:
			o.utf16 = true
		case 0x02:
			return o, unsupported("string-encoding=latin1+utf16")
		case 0x03, 0x04, 0x05:
			i, err := r.U32()
			if err != nil {
				return o, err
			}
			sort := byte(coreSortFunc)
			if b == 0x03 {
				sort = coreSortMemory
			}
			ref, err := s.coreIndex(sort, i)
			if err != nil {
				return o, err
			}
			switch b {
			case 0x03:
				o.memory = &ref
			case 0x04:
				o.realloc = &ref
			case 0x05:
				o.postReturn = &ref
			}
		case 0x06:
			return o, unsupported("async canonical options")
		case 0x07:
			return o, unsupported("async callbacks")
		default:
			return o, r.Errorf("unknown canonical option 0x%02x", b)
		}
	}
	return o, nil
}

func (s *space) importDecl(r *reader) error {
	name, err := externName(r)
	if err != nil {
		return err
	}
	if s.nested() {
		// Bound to the instantiation's argument of that name.
		if err := skipExternDesc(r); err != nil {
			return err
		}
		it, ok := s.args[name]
		if !ok {
			return fmt.Errorf("nested component import %q: no argument given", name)
		}
		return s.push(it)
	}
	d, err := s.externDesc(r, name)
	if err != nil {
		return fmt.Errorf("import %q: %w", name, err)
	}
	switch v := d.v.(type) {
	case *instanceType:
		s.c.imports = append(s.c.imports, name)
		for _, x := range v.exports {
			if res, ok := x.(*Resource); ok && res.Interface == "" {
				res.Interface = name
			}
		}
		s.instances = append(s.instances, &instanceItem{name: name, typ: v})
		return nil
	case *FuncType:
		s.c.imports = append(s.c.imports, name)
		s.funcs = append(s.funcs, &funcItem{name: name, typ: v})
		return nil
	}
	return s.push(d)
}

func (s *space) export(r *reader) error {
	name, err := externName(r)
	if err != nil {
		return err
	}
	it, err := s.sortIdx(r)
	if err != nil {
		return fmt.Errorf("export %q: %w", name, err)
	}
	has, err := r.Byte()
	if err != nil {
		return err
	}
	if has == 0x01 {
		// The ascribed type: checked by the toolchain; function exports
		// keep their lifted type, whose parameter names are the same.
		if err := skipExternDesc(r); err != nil {
			return err
		}
	} else if has != 0x00 {
		return r.Errorf("bad export type flag 0x%02x", has)
	}
	s.exports[name] = it
	return s.push(it)
}
