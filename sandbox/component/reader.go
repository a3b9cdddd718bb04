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

var errEOF = errors.New("unexpected end of section")

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

// externName reads an importname' or exportname': a 0x00 or 0x01 tag,
// then the name (0x01 adds a version suffix, which is read and dropped).
func (r *reader) externName() (string, error) {
	tag, err := r.byte()
	if err != nil {
		return "", err
	}
	switch tag {
	case 0x00:
		return r.name()
	case 0x01:
		n, err := r.name()
		if err != nil {
			return "", err
		}
		_, err = r.name()
		return n, err
	}
	return "", r.errorf("unknown name tag 0x%02x", tag)
}
