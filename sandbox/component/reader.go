package component

import (
	"errors"
	"fmt"
	"math"
	"unicode/utf8"
)

// reader decodes the binary format's primitives from untrusted bytes.
// Every method fails with an error rather than panicking or reading past
// the end.
type reader struct {
	b   []byte
	off int // of b[0] in the whole binary, for errors
	pos int
}

// errEOF is an item that runs past the end of its section.
var errEOF = errors.New("the section ends in the middle of an item (the file is cut short, or the item is written in a form this reader does not know)")

func (r *reader) errorf(format string, args ...any) error {
	return fmt.Errorf("at byte %d: %s", r.off+r.pos, fmt.Sprintf(format, args...))
}

func (r *reader) done() bool { return r.pos >= len(r.b) }

func (r *reader) byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, errEOF
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

func (r *reader) peek() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, errEOF
	}
	return r.b[r.pos], nil
}

func (r *reader) bytes(n uint32) ([]byte, error) {
	if uint64(n) > uint64(len(r.b)-r.pos) {
		return nil, errEOF
	}
	s := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return s, nil
}

// u32 reads an unsigned LEB128 of at most 32 bits.
func (r *reader) u32() (uint32, error) {
	var v uint64
	for shift := uint(0); shift < 35; shift += 7 {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			if v > math.MaxUint32 {
				return 0, r.errorf("integer too large")
			}
			return uint32(v), nil
		}
	}
	return 0, r.errorf("integer representation too long")
}

// s33 reads a signed LEB128 of at most 33 bits (a value type: negative
// for a primitive, an index otherwise).
func (r *reader) s33() (int64, error) {
	var v int64
	var shift uint
	for {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, nil
		}
		if shift >= 35 {
			return 0, r.errorf("integer representation too long")
		}
	}
}

func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	b, err := r.bytes(n)
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", r.errorf("name is not valid UTF-8")
	}
	return string(b), nil
}

// count reads a vector length, bounded by the bytes left so that a
// hostile length cannot make a huge allocation.
func (r *reader) count() (int, error) {
	n, err := r.u32()
	if err != nil {
		return 0, err
	}
	if int64(n) > int64(len(r.b)-r.pos) {
		return 0, r.errorf("vector of %d items in %d bytes", n, len(r.b)-r.pos)
	}
	return int(n), nil
}

// externName reads an importname' or exportname' as wasmparser
// (crates/wasmparser/src/readers/component/imports.rs,
// ComponentExternName) does:
//   - 0x00, then the name: what toolchains write today;
//   - 0x01, then the name: the older form (wit-component before
//     September 2024, e.g. cargo-component 0.16), whose tag said "an
//     interface name" before that came from the name's own syntax;
//   - 0x02, then the name and a vector of options, each a tag and a
//     string: 0x00 implements, 0x01 a version suffix (appended to the
//     name), 0x02 an external id.
func (r *reader) externName() (string, error) {
	tag, err := r.byte()
	if err != nil {
		return "", err
	}
	if tag > 0x02 {
		return "", r.errorf("unknown name form 0x%02x (0x00, 0x01 and 0x02 are known)", tag)
	}
	name, err := r.name()
	if err != nil || tag != 0x02 {
		return name, err
	}
	n, err := r.count()
	if err != nil {
		return "", err
	}
	var seen [3]bool
	suffix := ""
	for range n {
		opt, err := r.byte()
		if err != nil {
			return "", err
		}
		if opt > 0x02 {
			return "", r.errorf("name %q: unknown name option 0x%02x", name, opt)
		}
		if seen[opt] {
			return "", r.errorf("name %q: option 0x%02x given twice", name, opt)
		}
		seen[opt] = true
		v, err := r.name()
		if err != nil {
			return "", err
		}
		if opt == 0x01 {
			suffix = v
		}
	}
	return name + suffix, nil
}
