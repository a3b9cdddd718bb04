package jsonscan

import (
	"encoding/binary"
	"errors"
)

// MaxDepth is encoding/json's nesting limit.
const MaxDepth = 10000

// ErrSyntax is the error of invalid JSON.
var ErrSyntax = errors.New("invalid JSON")

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// stop8 has the high bit set in each byte of x that ends a run of plain
// string bytes: '"', '\\' or a control character (exactly: bytes ≥ 0x80
// are masked out by ^x).
func stop8(x uint64) uint64 {
	q := x ^ ('"' * lsb)
	b := x ^ ('\\' * lsb)
	return (((q - lsb) &^ q) | ((b - lsb) &^ b) | ((x - ' '*lsb) &^ x)) & msb
}

// StringRun returns the index of the first byte at or after i that is
// '"', '\\' or a control character, or len(s) when there is none, and
// whether a byte ≥ 0x80 came before it.
func StringRun(s []byte, i int) (int, bool) {
	var hi uint64
	for i+32 <= len(s) {
		a := binary.LittleEndian.Uint64(s[i:])
		b := binary.LittleEndian.Uint64(s[i+8:])
		c := binary.LittleEndian.Uint64(s[i+16:])
		d := binary.LittleEndian.Uint64(s[i+24:])
		if stop8(a)|stop8(b)|stop8(c)|stop8(d) != 0 {
			break
		}
		hi |= a | b | c | d
		i += 32
	}
	for i+8 <= len(s) {
		a := binary.LittleEndian.Uint64(s[i:])
		if stop8(a) != 0 {
			break
		}
		hi |= a
		i += 8
	}
	high := hi&msb != 0
	for ; i < len(s); i++ {
		c := s[i]
		if c == '"' || c == '\\' || c < ' ' {
			break
		}
		high = high || c >= 0x80
	}
	return i, high
}

// String describes a string literal: s[Start:End], quotes included.
type String struct {
	Start, End int
	Escaped    bool // has backslash escapes
	High       bool // has bytes ≥ 0x80
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipSpace returns the index of the first non-space byte at or after i.
func SkipSpace(s []byte, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// ScanString scans the string literal whose opening quote is s[i].
func ScanString(s []byte, i int) (String, error) {
	info := String{Start: i}
	i++
	for {
		j, high := StringRun(s, i)
		info.High = info.High || high
		if j >= len(s) {
			return info, ErrSyntax
		}
		switch c := s[j]; {
		case c == '"':
			info.End = j + 1
			return info, nil
		case c == '\\':
			info.Escaped = true
			if j+1 >= len(s) {
				return info, ErrSyntax
			}
			switch s[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i = j + 2
			case 'u':
				if j+6 > len(s) || !isHex4(s[j+2:j+6]) {
					return info, ErrSyntax
				}
				i = j + 6
			default:
				return info, ErrSyntax
			}
		default:
			return info, ErrSyntax
		}
	}
}

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// ScanValue returns the end of the value that starts at s[i] (no leading
// space), nested depth levels deep.
func ScanValue(s []byte, i, depth int) (int, error) {
	if i >= len(s) {
		return i, ErrSyntax
	}
	switch c := s[i]; {
	case c == '"':
		info, err := ScanString(s, i)
		return info.End, err
	case c == '{' || c == '[':
		if depth >= MaxDepth {
			return i, ErrSyntax
		}
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		i = SkipSpace(s, i+1)
		if i < len(s) && s[i] == end {
			return i + 1, nil
		}
		for {
			if c == '{' {
				if i >= len(s) || s[i] != '"' {
					return i, ErrSyntax
				}
				k, err := ScanString(s, i)
				if err != nil {
					return i, err
				}
				i = SkipSpace(s, k.End)
				if i >= len(s) || s[i] != ':' {
					return i, ErrSyntax
				}
				i = SkipSpace(s, i+1)
			}
			var err error
			if i, err = ScanValue(s, i, depth+1); err != nil {
				return i, err
			}
			i = SkipSpace(s, i)
			if i >= len(s) {
				return i, ErrSyntax
			}
			switch s[i] {
			case ',':
				i = SkipSpace(s, i+1)
			case end:
				return i + 1, nil
			default:
				return i, ErrSyntax
			}
		}
	case c == 't':
		return literal(s, i, "true")
	case c == 'f':
		return literal(s, i, "false")
	case c == 'n':
		return literal(s, i, "null")
	case c == '-' || '0' <= c && c <= '9':
		return number(s, i)
	}
	return i, ErrSyntax
}

func literal(s []byte, i int, lit string) (int, error) {
	if len(s)-i < len(lit) || string(s[i:i+len(lit)]) != lit {
		return i, ErrSyntax
	}
	return i + len(lit), nil
}

func number(s []byte, i int) (int, error) {
	digits := func(i int) (int, bool) {
		j := i
		for j < len(s) && '0' <= s[j] && s[j] <= '9' {
			j++
		}
		return j, j > i
	}
	if s[i] == '-' {
		i++
	}
	if i < len(s) && s[i] == '0' {
		i++
	} else {
		var ok bool
		if i, ok = digits(i); !ok {
			return i, ErrSyntax
		}
	}
	if i < len(s) && s[i] == '.' {
		var ok bool
		if i, ok = digits(i + 1); !ok {
			return i, ErrSyntax
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		var ok bool
		if i, ok = digits(i); !ok {
			return i, ErrSyntax
		}
	}
	return i, nil
}

// Valid reports whether s is one JSON value, with space around it at
// most: json.Valid, in one faster pass.
func Valid(s []byte) bool {
	i, err := ScanValue(s, SkipSpace(s, 0), 0)
	return err == nil && SkipSpace(s, i) == len(s)
}

// Members validates s as one JSON object and calls fn with each member's
// key (its literal, quotes included) and raw value, in order. It reports
// false, without calling fn, when s is not a valid object.
func Members(s []byte, fn func(key String, raw []byte)) bool {
	type member struct {
		k      String
		v0, v1 int
	}
	var buf [8]member
	ms := buf[:0]
	i := SkipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return false
	}
	i = SkipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return SkipSpace(s, i+1) == len(s)
	}
	for {
		if i >= len(s) || s[i] != '"' {
			return false
		}
		k, err := ScanString(s, i)
		if err != nil {
			return false
		}
		i = SkipSpace(s, k.End)
		if i >= len(s) || s[i] != ':' {
			return false
		}
		v0 := SkipSpace(s, i+1)
		v1, err := ScanValue(s, v0, 1)
		if err != nil {
			return false
		}
		ms = append(ms, member{k, v0, v1})
		i = SkipSpace(s, v1)
		if i >= len(s) {
			return false
		}
		if s[i] == '}' {
			break
		}
		if s[i] != ',' {
			return false
		}
		i = SkipSpace(s, i+1)
	}
	if SkipSpace(s, i+1) != len(s) {
		return false
	}
	for _, m := range ms {
		fn(m.k, s[m.v0:m.v1])
	}
	return true
}
