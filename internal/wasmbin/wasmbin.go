package wasmbin

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Magic starts every WebAssembly binary. The next four bytes are a
// little-endian version and layer: ModuleVersion and 0 for a core
// module, ComponentVersion and 1 for a component.
const Magic = "\x00asm"

// HeaderSize is the length of the magic, version and layer.
const HeaderSize = 8

// The versions this reader knows.
const (
	ModuleVersion    = 1    // a core module's, with layer 0
	ComponentVersion = 0x0d // a component's (the Component Model's binary), with layer 1
)

// Kind is what a binary's header says it is.
type Kind int

const (
	NotWasm   Kind = iota // shorter than the header, or no magic
	Module                // a core module: version 1, layer 0
	Component             // a component: version 0x0d, layer 1
	Unknown               // the magic, and a version or layer this reader does not know
)

// Header returns the version and layer of wasm; ok is false when wasm is
// shorter than the header or does not start with Magic.
func Header(wasm []byte) (version, layer uint16, ok bool) {
	if len(wasm) < HeaderSize || string(wasm[:4]) != Magic {
		return 0, 0, false
	}
	return binary.LittleEndian.Uint16(wasm[4:]), binary.LittleEndian.Uint16(wasm[6:]), true
}

// KindOf says from its header what wasm is.
func KindOf(wasm []byte) Kind {
	version, layer, ok := Header(wasm)
	switch {
	case !ok:
		return NotWasm
	case version == ModuleVersion && layer == 0:
		return Module
	case version == ComponentVersion && layer == 1:
		return Component
	}
	return Unknown
}

// IsComponent reports whether wasm starts with a component's header.
func IsComponent(wasm []byte) bool { return KindOf(wasm) == Component }

// ErrEOF is an item that runs past the end of its section (or a section
// past the end of the binary).
var ErrEOF = errors.New("the section ends in the middle of an item (the file is cut short, or the item is written in a form this reader does not know)")

// ErrTooLong is a LEB128 integer longer than its type allows.
var ErrTooLong = errors.New("integer representation too long")

// Error is malformed bytes at an offset of the whole binary.
type Error struct {
	Offset int
	Msg    string
	Err    error // ErrEOF or ErrTooLong, when it is one of those
}

func (e *Error) Error() string { return fmt.Sprintf("at byte %d: %s", e.Offset, e.Msg) }
func (e *Error) Unwrap() error { return e.Err }

// Uleb decodes an unsigned LEB128 of at most bits bits from the start of
// b: its value and its length in bytes. It fails with ErrEOF when b ends
// first, and with ErrTooLong when the integer has more bytes, or higher
// bits set, than bits allows.
func Uleb(b []byte, bits uint) (uint64, int, error) {
	var v uint64
	for i, shift := 0, uint(0); ; i, shift = i+1, shift+7 {
		if i >= len(b) {
			return 0, 0, ErrEOF
		}
		c := b[i]
		if shift >= bits || (bits-shift < 7 && c&0x7f>>(bits-shift) != 0) {
			return 0, 0, ErrTooLong
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, i + 1, nil
		}
	}
}

// Sleb decodes a signed LEB128 of at most bits bits (at most 64) from
// the start of b: its value, sign-extended, and its length. It fails
// with ErrEOF when b ends first and with ErrTooLong when the integer has
// more bytes than bits allows.
func Sleb(b []byte, bits uint) (int64, int, error) {
	var v int64
	limit := int((bits + 6) / 7)
	for i, shift := 0, uint(0); ; i, shift = i+1, shift+7 {
		if i >= len(b) {
			return 0, 0, ErrEOF
		}
		if i >= limit {
			return 0, 0, ErrTooLong
		}
		c := b[i]
		v |= int64(c&0x7f) << shift
		if c&0x80 == 0 {
			if shift+7 < 64 && c&0x40 != 0 {
				v |= -1 << (shift + 7)
			}
			return v, i + 1, nil
		}
	}
}

// Reader decodes the binary format's primitives from B, a part of a
// binary that starts at byte Off of the whole. Pos is the next byte to
// read. Every method fails with an error rather than panicking or
// reading past the end: ErrEOF when B ends in the middle of an item, an
// *Error naming the offset otherwise.
type Reader struct {
	B   []byte
	Off int // of B[0] in the whole binary, for errors
	Pos int
}

// Errorf returns an *Error at the reader's position.
func (r *Reader) Errorf(format string, args ...any) error {
	return &Error{Offset: r.Off + r.Pos, Msg: fmt.Sprintf(format, args...)}
}

// Done reports whether every byte has been read.
func (r *Reader) Done() bool { return r.Pos >= len(r.B) }

// Left is the number of bytes not yet read.
func (r *Reader) Left() int { return max(len(r.B)-r.Pos, 0) }

func (r *Reader) Byte() (byte, error) {
	if r.Pos >= len(r.B) {
		return 0, ErrEOF
	}
	c := r.B[r.Pos]
	r.Pos++
	return c, nil
}

func (r *Reader) Peek() (byte, error) {
	if r.Pos >= len(r.B) {
		return 0, ErrEOF
	}
	return r.B[r.Pos], nil
}

// Bytes returns the next n bytes, not copied.
func (r *Reader) Bytes(n uint32) ([]byte, error) {
	if uint64(n) > uint64(r.Left()) {
		return nil, ErrEOF
	}
	s := r.B[r.Pos : r.Pos+int(n)]
	r.Pos += int(n)
	return s, nil
}

// U32 reads an unsigned LEB128 of at most 32 bits.
func (r *Reader) U32() (uint32, error) {
	v, n, err := Uleb(r.B[min(r.Pos, len(r.B)):], 32)
	if err != nil {
		return 0, r.intError(err)
	}
	r.Pos += n
	return uint32(v), nil
}

// S33 reads a signed LEB128 of at most 33 bits (a component's value
// type: negative for a primitive, an index otherwise).
func (r *Reader) S33() (int64, error) {
	v, n, err := Sleb(r.B[min(r.Pos, len(r.B)):], 33)
	if err != nil {
		return 0, r.intError(err)
	}
	r.Pos += n
	return v, nil
}

func (r *Reader) intError(err error) error {
	if errors.Is(err, ErrEOF) {
		return ErrEOF
	}
	return &Error{Offset: r.Off + r.Pos, Msg: err.Error(), Err: err}
}

// Name reads a name: a length and that many bytes of UTF-8.
func (r *Reader) Name() (string, error) {
	n, err := r.U32()
	if err != nil {
		return "", err
	}
	b, err := r.Bytes(n)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", r.Errorf("name is not valid UTF-8")
	}
	return string(b), nil
}

// Count reads a vector length, bounded by the bytes left so that a
// hostile length cannot make a huge allocation.
func (r *Reader) Count() (int, error) {
	n, err := r.U32()
	if err != nil {
		return 0, err
	}
	if int64(n) > int64(r.Left()) {
		return 0, r.Errorf("vector of %d items in %d bytes", n, r.Left())
	}
	return int(n), nil
}

// Section is one section of a module or a component.
type Section struct {
	ID   byte
	At   int    // offset of the section's id in the whole binary
	Off  int    // offset of its body in the whole binary
	Size uint32 // the body's declared size
	Body []byte
}

// Section reads the next section. When its declared size runs past the
// end it fails with an *Error wrapping ErrEOF, and the Section returned
// still has its ID, At, Off and Size.
func (r *Reader) Section() (Section, error) {
	s := Section{At: r.Off + r.Pos}
	var err error
	if s.ID, err = r.Byte(); err != nil {
		return s, err
	}
	if s.Size, err = r.U32(); err != nil {
		return s, err
	}
	s.Off = r.Off + r.Pos
	if s.Body, err = r.Bytes(s.Size); err != nil {
		return s, &Error{Offset: s.At, Msg: fmt.Sprintf("section %d: its size, %d bytes, runs past the end", s.ID, s.Size), Err: ErrEOF}
	}
	return s, nil
}

// Sections calls f with each section of wasm, a module or a component,
// in order; it stops at the first error, f's returned as it is.
func Sections(wasm []byte, f func(Section) error) error {
	if _, _, ok := Header(wasm); !ok {
		return errors.New("not a WebAssembly binary")
	}
	r := &Reader{B: wasm[HeaderSize:], Off: HeaderSize}
	for !r.Done() {
		s, err := r.Section()
		if err != nil {
			return err
		}
		if err := f(s); err != nil {
			return err
		}
	}
	return nil
}

// SecExport is the id of a core module's export section.
const SecExport = 7

// Export is one export of a core module.
type Export struct {
	Name  string
	Kind  byte // 0 func, 1 table, 2 memory, 3 global (and 4 tag)
	Index uint32
}

// Exports reads the export section of a core module, without compiling
// or validating anything else.
func Exports(wasm []byte) ([]Export, error) {
	var out []Export
	err := Sections(wasm, func(s Section) error {
		if s.ID != SecExport {
			return nil
		}
		r := &Reader{B: s.Body, Off: s.Off}
		n, err := r.Count()
		if err != nil {
			return err
		}
		out = make([]Export, 0, n)
		for i := range n {
			var e Export
			if e.Name, err = r.Name(); err == nil {
				if e.Kind, err = r.Byte(); err == nil {
					e.Index, err = r.U32()
				}
			}
			if err != nil {
				return fmt.Errorf("export %d of %d: %w", i, n, err)
			}
			out = append(out, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// AppendU32 appends v as an unsigned LEB128.
func AppendU32(b []byte, v uint32) []byte { return binary.AppendUvarint(b, uint64(v)) }

// AppendSleb appends v as a signed LEB128.
func AppendSleb(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// AppendName appends s as a name: its length, then its bytes.
func AppendName(b []byte, s string) []byte { return append(AppendU32(b, uint32(len(s))), s...) }

// AppendSection appends a section: its id, its body's size and its body.
func AppendSection(b []byte, id byte, body []byte) []byte {
	return append(AppendU32(append(b, id), uint32(len(body))), body...)
}
