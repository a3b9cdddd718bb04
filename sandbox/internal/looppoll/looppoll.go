package looppoll

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/mcphost/mcphost/internal/wasmbin"
)

// Version names the instrumentation's protocol. It is part of the export
// names, so a module rewritten by another version has other bytes, and a
// compilation cache keyed by the module's bytes never serves its code for
// this one.
const Version = 1

// Export names of the two globals Instrument adds. Their "mcphost:" prefix
// is reserved: no toolchain emits a colon in an export name of its own.
const (
	// CounterExport counts down the loop iterations left before the guest
	// next runs memory.grow 0 and reads InterruptExport. A host sets it to
	// 0 to make the guest look now.
	CounterExport = "mcphost:looppoll/v1/counter"
	// InterruptExport, once non-zero, makes the guest trap (unreachable)
	// the next time it looks.
	InterruptExport = "mcphost:looppoll/v1/interrupt"
	// StartExport is the module's start function, when it has one:
	// Instrument removes the start section, which would run inside
	// instantiation, before a host can reach the globals above, and
	// exports its function under this name instead. A host calls it once,
	// right after instantiating, with the poll armed, so that a start
	// function that never returns is stopped like any call.
	StartExport = "mcphost:looppoll/v1/start"
)

// Interval is the number of loop iterations between two polls that leave
// the guest's native code (memory.grow 0).
const Interval = 4096

// ErrNoMemory says the module has loops but no memory, so the poll has no
// way to leave native code (memory.grow would be invalid). A module
// without memory and without loops gets the globals and no poll.
var ErrNoMemory = errors.New("looppoll: module has no memory")

// ErrNameTaken says the module already exports one of the reserved names.
var ErrNameTaken = errors.New("looppoll: module already exports a reserved name")

// UnsupportedError says the module uses a feature the rewriter does not
// decode, so it cannot know where the loops are.
type UnsupportedError struct {
	Offset int    // byte offset in the input
	What   string // for example "opcode 0xfd (SIMD)"
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("looppoll: unsupported %s at offset %d", e.What, e.Offset)
}

// FormatError says the module is malformed.
type FormatError struct {
	Offset int
	Msg    string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("looppoll: malformed module at offset %d: %s", e.Offset, e.Msg)
}

// Stats describe one instrumentation.
type Stats struct {
	Funcs int // function bodies rewritten
	Loops int // polls inserted
}

// Section ids.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
	secTag       = 13
)

// order is where each known section must appear; custom sections may
// appear anywhere.
var order = [...]int{
	secType: 1, secImport: 2, secFunction: 3, secTable: 4, secMemory: 5,
	secGlobal: 7, secExport: 8, secStart: 9, secElement: 10, secDataCount: 11,
	secCode: 12, secData: 13,
}

type section struct {
	id    byte
	start int // offset of the body in the input
	body  []byte
}

// Instrument returns a copy of wasm with the poll inserted after every
// loop opcode. wasm is not modified.
func Instrument(wasm []byte) ([]byte, Stats, error) {
	var st Stats
	secs, err := readSections(wasm)
	if err != nil {
		return nil, st, err
	}
	m, err := inspect(secs)
	if err != nil {
		return nil, st, err
	}
	start, hasStart, err := startFunc(secs)
	if err != nil {
		return nil, st, err
	}
	ctr := m.globals
	intr := m.globals + 1
	if intr < ctr || intr > math.MaxUint32-1 {
		return nil, st, &FormatError{0, "too many globals"}
	}
	e := emitter{
		out:      make([]byte, 0, len(wasm)+len(wasm)/32+64),
		ctr:      ctr,
		start:    start,
		hasStart: hasStart,
	}
	e.out = append(e.out, wasm[:8]...)
	if err := e.sections(secs, pollCode(ctr, intr), &st); err != nil {
		return nil, st, err
	}
	return e.out, st, nil
}

// readSections checks wasm's header and splits it into its sections,
// refusing sections it does not know and known ones out of order.
func readSections(wasm []byte) ([]section, error) {
	version, layer, ok := wasmbin.Header(wasm)
	if !ok {
		return nil, &FormatError{0, "no \\0asm magic"}
	}
	if version != wasmbin.ModuleVersion || layer != 0 {
		return nil, &UnsupportedError{4, fmt.Sprintf("binary version %d", uint32(version)|uint32(layer)<<16)}
	}
	var secs []section
	last := 0
	err := wasmbin.Sections(wasm, func(s wasmbin.Section) error {
		at, id := s.At, s.ID
		if id != secCustom {
			if int(id) >= len(order) || order[id] == 0 {
				what := fmt.Sprintf("section id %d", id)
				if id == secTag {
					what = "tag section (exception handling)"
				}
				return &UnsupportedError{at, what}
			}
			if order[id] <= last {
				return &FormatError{at, fmt.Sprintf("section %d out of order", id)}
			}
			last = order[id]
		}
		secs = append(secs, section{id: id, start: s.Off, body: s.Body})
		return nil
	})
	if err != nil {
		return nil, formatError(wasm, err)
	}
	return secs, nil
}

// inspect reads what the rewrite needs from outside the code section,
// and refuses a module it cannot instrument: one with loops and no
// memory (ErrNoMemory), or one exporting a reserved name (ErrNameTaken).
func inspect(secs []section) (moduleInfo, error) {
	var m moduleInfo
	for _, s := range secs {
		if err := m.scan(s); err != nil {
			return m, err
		}
	}
	if m.memories == 0 {
		// Without a memory there is no memory.grow for the poll; a
		// module without loops needs no poll, only the globals (a host
		// instruments every module of a set alike).
		var loops Stats
		for _, s := range secs {
			if s.id == secCode {
				if _, err := rewriteCode(s, nil, &loops); err != nil {
					return m, err
				}
			}
		}
		if loops.Loops > 0 {
			return m, ErrNoMemory
		}
	}
	if m.exported[CounterExport] || m.exported[InterruptExport] || m.exported[StartExport] {
		return m, ErrNameTaken
	}
	return m, nil
}

// startFunc returns the start section's function index, and whether
// there is one.
func startFunc(secs []section) (uint32, bool, error) {
	start, hasStart := uint32(0), false
	for _, s := range secs {
		if s.id == secStart {
			r := reader{b: s.body, base: s.start}
			start, hasStart = r.u32(), true
			if r.err != nil {
				return 0, false, r.err
			}
			if !r.done() {
				return 0, false, &FormatError{s.start, "bytes after the start function"}
			}
		}
	}
	return start, hasStart, nil
}

// emitter writes the instrumented module: the sections in order, with
// the two globals and their exports (and the start function's) added,
// each in its section or in a new one where it would be.
type emitter struct {
	out        []byte
	ctr        uint32 // the counter global; the interrupt is ctr+1
	start      uint32 // the start function, exported when hasStart
	hasStart   bool
	globalDone bool
	exportDone bool
}

// sections appends secs to e.out, the code section with poll after every
// loop header (counted in st), and the start section left out.
func (e *emitter) sections(secs []section, poll []byte, st *Stats) error {
	for _, s := range secs {
		if s.id != secCustom {
			if !e.globalDone && order[s.id] > order[secGlobal] {
				e.global(nil)
			}
			if !e.exportDone && order[s.id] > order[secExport] {
				e.export(nil)
			}
		}
		switch s.id {
		case secStart: // exported as StartExport instead
		case secGlobal:
			e.global(s.body)
		case secExport:
			e.export(s.body)
		case secCode:
			body, err := rewriteCode(s, poll, st)
			if err != nil {
				return err
			}
			if uint64(len(body)) > math.MaxUint32 {
				return &UnsupportedError{s.start, "code section over 4 GiB once instrumented"}
			}
			e.out = wasmbin.AppendSection(e.out, secCode, body)
		default:
			e.out = wasmbin.AppendSection(e.out, s.id, s.body)
		}
	}
	if !e.globalDone {
		e.global(nil)
	}
	if !e.exportDone {
		e.export(nil)
	}
	return nil
}

// global appends the global section: old's globals (the body of the
// module's own section, or nil), then the counter and the interrupt.
func (e *emitter) global(old []byte) {
	// Appended after the existing globals: no index shifts.
	var b []byte
	n, rest := vecRest(old)
	b = binary.AppendUvarint(b, uint64(n)+2)
	b = append(b, rest...)
	b = append(b, 0x7f, 0x01, 0x41) // i32, mutable, i32.const
	b = wasmbin.AppendSleb(b, Interval)
	b = append(b, 0x0b)
	b = append(b, 0x7f, 0x01, 0x41, 0x00, 0x0b) // i32, mutable, i32.const 0
	e.out = wasmbin.AppendSection(e.out, secGlobal, b)
	e.globalDone = true
}

// export appends the export section: old's exports (the body of the
// module's own section, or nil), then the two globals' and the start
// function's.
func (e *emitter) export(old []byte) {
	var b []byte
	n, rest := vecRest(old)
	added := uint64(2)
	if e.hasStart {
		added++
	}
	b = binary.AppendUvarint(b, uint64(n)+added)
	b = append(b, rest...)
	for i, name := range []string{CounterExport, InterruptExport} {
		b = binary.AppendUvarint(b, uint64(len(name)))
		b = append(b, name...)
		b = append(b, 0x03) // global
		b = binary.AppendUvarint(b, uint64(e.ctr)+uint64(i))
	}
	if e.hasStart {
		b = binary.AppendUvarint(b, uint64(len(StartExport)))
		b = append(b, StartExport...)
		b = append(b, 0x00) // func
		b = binary.AppendUvarint(b, uint64(e.start))
	}
	e.out = wasmbin.AppendSection(e.out, secExport, b)
	e.exportDone = true
}

// vecRest splits a section body into its count and its entries (0 and nil
// for a nil body).
func vecRest(body []byte) (uint32, []byte) {
	if body == nil {
		return 0, nil
	}
	r := reader{b: body}
	n := r.u32()
	return n, body[r.pos:]
}

// moduleInfo is what the rewriter needs to know outside the code section.
type moduleInfo struct {
	globals  uint32 // imported plus defined
	memories uint32 // imported plus defined
	exported map[string]bool
}

func (m *moduleInfo) scan(s section) error {
	r := reader{b: s.body, base: s.start}
	switch s.id {
	case secImport:
		n := r.u32()
		for i := uint32(0); i < n && r.err == nil; i++ {
			r.name()
			r.name()
			at := r.pos
			switch kind := r.byte(); kind {
			case 0x00: // function
				r.u32()
			case 0x01: // table
				r.refType()
				r.limits()
			case 0x02: // memory
				r.limits()
				m.memories++
			case 0x03: // global
				r.valType()
				r.byte()
				m.globals++
			case 0x04:
				return &UnsupportedError{r.base + at, "tag import (exception handling)"}
			default:
				r.fail(at, fmt.Sprintf("import kind 0x%02x", kind))
			}
		}
	case secMemory:
		n := r.u32()
		for i := uint32(0); i < n && r.err == nil; i++ {
			r.limits()
		}
		m.memories += n
	case secGlobal:
		n := r.u32()
		m.globals += n
		if m.globals < n {
			r.fail(0, "too many globals")
		}
	case secExport:
		m.exported = make(map[string]bool)
		n := r.u32()
		for i := uint32(0); i < n && r.err == nil; i++ {
			m.exported[r.name()] = true
			r.byte()
			r.u32()
		}
	default:
		return nil
	}
	return r.err
}

// pollCode is the code inserted after every loop header. It decrements
// first and tests with a signed <= 0, rather than testing for == 0 and
// decrementing after: the host's store of 0 can land between the guest's
// test and its decrement, and the guest would then count down from -1
// through four billion iterations before it looked again.
func pollCode(ctr, intr uint32) []byte {
	gget := func(b []byte, i uint32) []byte { return binary.AppendUvarint(append(b, 0x23), uint64(i)) }
	gset := func(b []byte, i uint32) []byte { return binary.AppendUvarint(append(b, 0x24), uint64(i)) }
	var b []byte
	b = gget(b, ctr)
	b = append(b, 0x41, 0x01, 0x6b) // i32.const 1; i32.sub
	b = gset(b, ctr)
	b = gget(b, ctr)
	b = append(b, 0x41, 0x00, 0x4c, 0x04, 0x40) // i32.const 0; i32.le_s; if
	b = wasmbin.AppendSleb(append(b, 0x41), Interval)
	b = gset(b, ctr)
	b = append(b, 0x41, 0x00, 0x40, 0x00, 0x1a) // i32.const 0; memory.grow 0; drop
	b = gget(b, intr)
	b = append(b, 0x04, 0x40, 0x00, 0x0b) // if unreachable end
	b = append(b, 0x0b)                   // end
	return b
}

// rewriteCode returns the code section's body with the poll after every
// loop opcode.
func rewriteCode(s section, poll []byte, st *Stats) ([]byte, error) {
	r := reader{b: s.body, base: s.start}
	n := r.u32()
	out := make([]byte, 0, len(s.body)+len(s.body)/32)
	out = binary.AppendUvarint(out, uint64(n))
	var fn []byte
	for i := uint32(0); i < n && r.err == nil; i++ {
		size := r.u32()
		if r.err != nil {
			break
		}
		if uint64(size) > uint64(len(r.b)-r.pos) {
			return nil, &FormatError{r.base + r.pos, "function body runs past the section"}
		}
		body := reader{b: r.b[:r.pos+int(size)], pos: r.pos, base: r.base}
		r.pos += int(size)
		var err error
		fn, err = rewriteBody(&body, poll, fn[:0], st)
		if err != nil {
			return nil, err
		}
		out = binary.AppendUvarint(out, uint64(len(fn)))
		out = append(out, fn...)
		st.Funcs++
	}
	if r.err != nil {
		return nil, r.err
	}
	if !r.done() {
		return nil, &FormatError{r.base + r.pos, "bytes after the last function body"}
	}
	return out, nil
}

// rewriteBody copies one function body (locals and code) from r to out,
// inserting poll after every loop opcode.
func rewriteBody(r *reader, poll, out []byte, st *Stats) ([]byte, error) {
	start := r.pos
	groups := r.u32()
	for i := uint32(0); i < groups && r.err == nil; i++ {
		r.u32()
		r.valType()
	}
	out = append(out, r.b[start:r.pos]...)
	depth := 1 // the function's own block
	for depth > 0 && r.err == nil {
		at := r.pos
		op := r.byte()
		if r.err != nil {
			break
		}
		switch {
		case op == 0x02 || op == 0x03 || op == 0x04: // block, loop, if
			r.blockType()
			depth++
		case op == 0x0b: // end
			depth--
		case op == 0x00 || op == 0x01 || op == 0x05 || op == 0x0f || op == 0x1a || op == 0x1b:
			// unreachable, nop, else, return, drop, select
		case op == 0x0c || op == 0x0d || op == 0x10: // br, br_if, call
			r.u32()
		case op == 0x0e: // br_table
			n := r.u32()
			for j := uint32(0); j <= n && r.err == nil; j++ {
				r.u32()
			}
		case op == 0x11: // call_indirect type table
			r.u32()
			r.u32()
		case op == 0x1c: // select t*
			n := r.u32()
			for j := uint32(0); j < n && r.err == nil; j++ {
				r.valType()
			}
		case op >= 0x20 && op <= 0x26: // local.*, global.*, table.get/set
			r.u32()
		case op >= 0x28 && op <= 0x3e: // loads and stores
			r.memArg()
		case op == 0x3f || op == 0x40: // memory.size, memory.grow
			r.memIndex()
		case op == 0x41:
			r.sleb(32)
		case op == 0x42:
			r.sleb(64)
		case op == 0x43:
			r.skip(4)
		case op == 0x44:
			r.skip(8)
		case op >= 0x45 && op <= 0xc4: // numeric, sign extension
		case op == 0xd0: // ref.null t
			r.refType()
		case op == 0xd1: // ref.is_null
		case op == 0xd2: // ref.func
			r.u32()
		case op == 0xfc:
			r.prefixed(at)
		default:
			return nil, &UnsupportedError{r.base + at, opcodeName(op)}
		}
		if r.err != nil {
			break
		}
		out = append(out, r.b[at:r.pos]...)
		if op == 0x03 {
			out = append(out, poll...)
			st.Loops++
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if !r.done() {
		return nil, &FormatError{r.base + r.pos, "bytes after the function's final end"}
	}
	return out, nil
}

// opcodeName names an opcode the rewriter refuses.
func opcodeName(op byte) string {
	var what string
	switch op {
	case 0xfd:
		what = "SIMD"
	case 0xfe:
		what = "threads"
	case 0xfb:
		what = "GC"
	case 0x06, 0x07, 0x08, 0x09, 0x18, 0x19, 0x1f:
		what = "exception handling"
	case 0x12, 0x13:
		what = "tail calls"
	case 0x14, 0x15, 0xd3, 0xd4, 0xd5, 0xd6:
		what = "typed function references"
	default:
		what = "unknown"
	}
	return fmt.Sprintf("opcode 0x%02x (%s)", op, what)
}

// reader decodes a byte slice; the first failure sticks in err and every
// later read returns zero.
type reader struct {
	b    []byte
	pos  int
	base int // offset of b[0] in the module, for errors
	err  error
}

func (r *reader) done() bool { return r.pos >= len(r.b) }

func (r *reader) fail(at int, msg string) {
	if r.err == nil {
		r.err = &FormatError{r.base + at, msg}
	}
}

func (r *reader) unsupported(at int, what string) {
	if r.err == nil {
		r.err = &UnsupportedError{r.base + at, what}
	}
}

func (r *reader) byte() byte {
	if r.err != nil {
		return 0
	}
	if r.pos >= len(r.b) {
		r.fail(r.pos, "unexpected end")
		return 0
	}
	c := r.b[r.pos]
	r.pos++
	return c
}

func (r *reader) skip(n int) {
	if r.err != nil {
		return
	}
	if n > len(r.b)-r.pos {
		r.fail(r.pos, "unexpected end")
		return
	}
	r.pos += n
}

// uleb reads an unsigned LEB128 of at most bits bits.
func (r *reader) uleb(bits uint) uint64 {
	if r.err != nil {
		return 0
	}
	v, n, err := wasmbin.Uleb(r.b[r.pos:], bits)
	r.leb(n, err)
	return v
}

func (r *reader) u32() uint32 { return uint32(r.uleb(32)) }

// sleb skips a signed LEB128 of at most bits bits (it only has to be
// copied, so its value is not needed).
func (r *reader) sleb(bits uint) {
	if r.err != nil {
		return
	}
	_, n, err := wasmbin.Sleb(r.b[r.pos:], bits)
	r.leb(n, err)
}

// leb moves past a LEB128 of n bytes, or fails with err.
func (r *reader) leb(n int, err error) {
	switch {
	case errors.Is(err, wasmbin.ErrEOF):
		r.fail(len(r.b), "unexpected end")
	case err != nil:
		r.fail(r.pos, "integer too long")
	default:
		r.pos += n
	}
}

func (r *reader) name() string {
	n := r.u32()
	if r.err != nil {
		return ""
	}
	at := r.pos
	r.skip(int(n))
	if r.err != nil {
		return ""
	}
	return string(r.b[at:r.pos])
}

func (r *reader) valType() {
	at := r.pos
	switch t := r.byte(); t {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x70, 0x6f: // i32 i64 f32 f64 funcref externref
	case 0x7b:
		r.unsupported(at, "value type v128 (SIMD)")
	default:
		if r.err == nil {
			r.unsupported(at, fmt.Sprintf("value type 0x%02x", t))
		}
	}
}

func (r *reader) refType() {
	at := r.pos
	if t := r.byte(); r.err == nil && t != 0x70 && t != 0x6f {
		r.unsupported(at, fmt.Sprintf("reference type 0x%02x", t))
	}
}

func (r *reader) limits() {
	at := r.pos
	flags := r.byte()
	switch flags {
	case 0x00:
		r.u32()
	case 0x01, 0x03: // max, shared max
		r.u32()
		r.u32()
	case 0x02:
		r.fail(at, "shared memory without a maximum")
	default:
		if r.err == nil {
			r.unsupported(at, fmt.Sprintf("limits flags 0x%02x (memory64?)", flags))
		}
	}
}

func (r *reader) blockType() {
	if r.err != nil || r.pos >= len(r.b) {
		r.byte()
		return
	}
	switch r.b[r.pos] {
	case 0x40:
		r.pos++
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x70, 0x6f, 0x7b:
		r.valType()
	default: // a type index, as a positive s33
		at := r.pos
		c := r.b[r.pos]
		if c&0x80 == 0 && c&0x40 != 0 {
			r.unsupported(at, fmt.Sprintf("block type 0x%02x", c))
			return
		}
		r.sleb(33)
	}
}

func (r *reader) memArg() {
	at := r.pos
	if align := r.u32(); r.err == nil && align >= 64 {
		r.unsupported(at, "memory index in a memarg (multiple memories)")
		return
	}
	r.u32()
}

func (r *reader) memIndex() {
	at := r.pos
	if b := r.byte(); r.err == nil && b != 0 {
		r.unsupported(at, "memory index other than 0 (multiple memories)")
	}
}

// prefixed decodes the 0xfc family: saturating truncation, bulk memory and
// table instructions.
func (r *reader) prefixed(at int) {
	sub := r.u32()
	if r.err != nil {
		return
	}
	switch {
	case sub <= 7: // iNN.trunc_sat_fNN_{s,u}
	case sub == 8: // memory.init data mem
		r.u32()
		r.memIndex()
	case sub == 9 || sub == 13: // data.drop, elem.drop
		r.u32()
	case sub == 10: // memory.copy dst src
		r.memIndex()
		r.memIndex()
	case sub == 11: // memory.fill
		r.memIndex()
	case sub == 12 || sub == 14: // table.init elem table, table.copy dst src
		r.u32()
		r.u32()
	case sub >= 15 && sub <= 17: // table.grow, table.size, table.fill
		r.u32()
	default:
		r.unsupported(at, fmt.Sprintf("opcode 0xfc %d", sub))
	}
}

// formatError says what wasmbin found wrong with wasm's sections in
// this package's terms; the callback's own errors pass as they are.
func formatError(wasm []byte, err error) error {
	var we *wasmbin.Error
	switch {
	case errors.As(err, &we):
		if errors.Is(we, wasmbin.ErrEOF) {
			return &FormatError{we.Offset, "section runs past the end"}
		}
		return &FormatError{we.Offset, we.Msg}
	case errors.Is(err, wasmbin.ErrEOF):
		return &FormatError{len(wasm), "unexpected end"}
	}
	return err
}
