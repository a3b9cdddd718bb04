package jsonscan

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"unicode/utf8"
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
// string bytes: '"', '\\' or a control character. Bytes ≥ 0x80 never
// match (the ^x). The lowest byte it marks is exact; a byte above a
// marked one may be marked falsely (a borrow carries into it).
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
	// Most strings (keys, names, short values) end within 8 bytes: look
	// there before a 64-byte round.
	if i+8 <= len(s) {
		a := binary.LittleEndian.Uint64(s[i:])
		if m := stop8(a); m != 0 {
			return runEnd(i, a, m, 0)
		}
		hi = a
		i += 8
	}
	// 64 bytes a round: compiled to Wasm under wazero's
	// CloseOnContextDone every loop iteration calls out of the guest, so
	// fewer rounds matter more than the work in each.
	for i+64 <= len(s) {
		w := s[i : i+64 : i+64]
		a := binary.LittleEndian.Uint64(w[0:])
		b := binary.LittleEndian.Uint64(w[8:])
		c := binary.LittleEndian.Uint64(w[16:])
		d := binary.LittleEndian.Uint64(w[24:])
		e := binary.LittleEndian.Uint64(w[32:])
		f := binary.LittleEndian.Uint64(w[40:])
		g := binary.LittleEndian.Uint64(w[48:])
		h := binary.LittleEndian.Uint64(w[56:])
		if stop8(a)|stop8(b)|stop8(c)|stop8(d)|stop8(e)|stop8(f)|stop8(g)|stop8(h) != 0 {
			break
		}
		hi |= a | b | c | d | e | f | g | h
		i += 64
	}
	for i+8 <= len(s) {
		a := binary.LittleEndian.Uint64(s[i:])
		if m := stop8(a); m != 0 {
			return runEnd(i, a, m, hi)
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
		high = high || c >= utf8.RuneSelf
	}
	return i, high
}

// runEnd is StringRun's answer when the 8 bytes a at i hold its end: m,
// stop8(a), marks the first stopping byte with its lowest bit, and hi
// holds the bytes before i.
func runEnd(i int, a, m, hi uint64) (int, bool) {
	n := bits.TrailingZeros64(m) / 8
	hi |= a & (1<<(8*n) - 1) // the n bytes before the stop
	return i + n, hi&msb != 0
}

// String describes a string literal: s[Start:End], quotes included.
type String struct {
	Start, End int
	Escaped    bool // has backslash escapes
	High       bool // has bytes ≥ 0x80
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// SkipSpace returns the index of the first non-space byte at or after i,
// or len(s).
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
		default: // a control character
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

// A Scanner validates JSON. The zero Scanner is ready to use; the package
// functions [ScanValue], [Valid] and [Members] are its methods.
type Scanner struct {
	// OnString, when set, is called with every string value (not the
	// keys) as the scan passes it, in document order. The guest SDK finds
	// a call's big strings with it, in the pass that validates them.
	OnString func(String)
}

// ScanValue returns the end of the value that starts at s[i] (no leading
// space), nested depth levels deep.
func ScanValue(s []byte, i, depth int) (int, error) { return Scanner{}.Value(s, i, depth) }

// Value returns the end of the value that starts at s[i] (no leading
// space), nested depth levels deep. It walks objects itself rather than
// through a callback: this is the scanner's inner loop, and a closure
// call per member costs, in Wasm most.
func (sc Scanner) Value(s []byte, i, depth int) (int, error) {
	if i >= len(s) {
		return i, ErrSyntax
	}
	switch c := s[i]; {
	case c == '"':
		info, err := ScanString(s, i)
		if err != nil {
			return i, err
		}
		if sc.OnString != nil {
			sc.OnString(info)
		}
		return info.End, nil
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
		for more := true; more; {
			var err error
			if c == '{' {
				if _, i, err = memberKey(s, i); err != nil {
					return i, err
				}
			}
			if i, err = sc.Value(s, i, depth+1); err != nil {
				return i, err
			}
			if i, more, err = next(s, i, end); err != nil {
				return i, err
			}
		}
		return i, nil
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

func digits(s []byte, i int) (int, bool) {
	j := i
	for j < len(s) && '0' <= s[j] && s[j] <= '9' {
		j++
	}
	return j, j > i
}

func number(s []byte, i int) (int, error) {
	if s[i] == '-' {
		i++
	}
	var ok bool
	if i < len(s) && s[i] == '0' {
		i++
	} else if i, ok = digits(s, i); !ok {
		return i, ErrSyntax
	}
	if i < len(s) && s[i] == '.' {
		if i, ok = digits(s, i+1); !ok {
			return i, ErrSyntax
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i, ok = digits(s, i); !ok {
			return i, ErrSyntax
		}
	}
	return i, nil
}

// Valid reports whether s is one JSON value, with space around it at
// most: json.Valid, in one faster pass.
func Valid(s []byte) bool { return Scanner{}.Valid(s) }

// Valid reports whether s is one JSON value, with space around it at
// most.
func (sc Scanner) Valid(s []byte) bool {
	i, err := sc.Value(s, SkipSpace(s, 0), 0)
	return err == nil && SkipSpace(s, i) == len(s)
}

// Object scans the object whose '{' is s[i] and returns its end. It calls
// member with each member's key and the start of its value (space
// skipped); member scans the value, with [Scanner.Value] or as it likes,
// and returns the value's end.
func (sc Scanner) Object(s []byte, i int, member func(key String, v0 int) (int, error)) (int, error) {
	if i >= len(s) || s[i] != '{' {
		return i, ErrSyntax
	}
	i = SkipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return i + 1, nil
	}
	for more := true; more; {
		k, v0, err := memberKey(s, i)
		if err != nil {
			return v0, err
		}
		if i, err = member(k, v0); err != nil {
			return i, err
		}
		if i, more, err = next(s, i, '}'); err != nil {
			return i, err
		}
	}
	return i, nil
}

// Array scans the array whose '[' is s[i] and returns its end. It calls
// elem with the start of each element (space skipped); elem scans the
// element, with [Scanner.Value] or as it likes, and returns its end.
func (sc Scanner) Array(s []byte, i int, elem func(v0 int) (int, error)) (int, error) {
	if i >= len(s) || s[i] != '[' {
		return i, ErrSyntax
	}
	i = SkipSpace(s, i+1)
	if i < len(s) && s[i] == ']' {
		return i + 1, nil
	}
	for more := true; more; {
		var err error
		if i, err = elem(i); err != nil {
			return i, err
		}
		if i, more, err = next(s, i, ']'); err != nil {
			return i, err
		}
	}
	return i, nil
}

// memberKey scans the key at s[i] of an object's member and the colon
// after it, and returns the key and the start of the value.
func memberKey(s []byte, i int) (String, int, error) {
	if i >= len(s) || s[i] != '"' {
		return String{}, i, ErrSyntax
	}
	k, err := ScanString(s, i)
	if err != nil {
		return k, i, err
	}
	i = SkipSpace(s, k.End)
	if i >= len(s) || s[i] != ':' {
		return k, i, ErrSyntax
	}
	return k, SkipSpace(s, i+1), nil
}

// next steps over what follows an element or member that ends at s[i]:
// a comma (more follow) or end, the closing bracket (none do).
func next(s []byte, i int, end byte) (int, bool, error) {
	i = SkipSpace(s, i)
	switch {
	case i >= len(s):
		return i, false, ErrSyntax
	case s[i] == ',':
		return SkipSpace(s, i+1), true, nil
	case s[i] == end:
		return i + 1, false, nil
	}
	return i, false, ErrSyntax
}

// Members validates s as one JSON object and calls fn with each member's
// key (its literal, quotes included) and raw value, in order. It reports
// false, without calling fn, when s is not a valid object.
func Members(s []byte, fn func(key String, raw []byte)) bool { return Scanner{}.Members(s, fn) }

// Members is [Members] with sc's OnString called during the validation.
func (sc Scanner) Members(s []byte, fn func(key String, raw []byte)) bool {
	type member struct {
		k      String
		v0, v1 int
	}
	var buf [8]member
	ms := buf[:0]
	end, err := sc.Object(s, SkipSpace(s, 0), func(k String, v0 int) (int, error) {
		v1, err := sc.Value(s, v0, 1)
		ms = append(ms, member{k, v0, v1})
		return v1, err
	})
	if err != nil || SkipSpace(s, end) != len(s) {
		return false
	}
	for _, m := range ms {
		fn(m.k, s[m.v0:m.v1])
	}
	return true
}
