package guest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// A hand-written JSON scanner for the few places where the SDK handles a
// call's bulk: the input envelope, large string arguments and the output
// of call_tool. encoding/json calls a step function per byte, several
// times over (Unmarshal validates, then decodes; Marshal of a Marshaler
// compacts what it returned), which compiled to Wasm costs about a
// microsecond per byte of a 3 MB argument. This scanner steps over string
// contents 8 bytes at a time and is used once per byte; everything small
// still goes through encoding/json, so its semantics stay the reference.

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

var errSyntax = errors.New("invalid JSON")

// stop8 has the high bit set in every byte of x that ends a run of plain
// string bytes: '"', '\\' or a control character. Bytes ≥ 0x80 never
// match (the ^x), so the test is exact.
func stop8(x uint64) uint64 {
	q := x ^ ('"' * lsb)
	b := x ^ ('\\' * lsb)
	return (((q - lsb) &^ q) | ((b - lsb) &^ b) | ((x - ' '*lsb) &^ x)) & msb
}

// stringRun returns the index of the first byte at or after i that is
// '"', '\\' or a control character (len(s) when none is), and whether a
// byte ≥ 0x80 came before it.
func stringRun(s []byte, i int) (int, bool) {
	var hi uint64
	// 64 bytes a round: under wazero's CloseOnContextDone every loop
	// iteration calls out of the guest, so fewer rounds matter more than
	// the work in each.
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
		high = high || c >= utf8.RuneSelf
	}
	return i, high
}

// strInfo describes a string literal found by the scanner.
type strInfo struct {
	start, end int  // the literal, quotes included: s[start:end]
	esc        bool // has backslash escapes
	high       bool // has bytes ≥ 0x80
}

// scanner validates JSON and reports string values (not keys) to onString
// when it is set.
type scanner struct {
	s        []byte
	onString func(strInfo)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (sc *scanner) space(i int) int {
	for i < len(sc.s) && isSpace(sc.s[i]) {
		i++
	}
	return i
}

// str scans the string literal at i (its opening quote).
func (sc *scanner) str(i int) (strInfo, error) {
	info := strInfo{start: i}
	s := sc.s
	i++
	for {
		j, high := stringRun(s, i)
		info.high = info.high || high
		if j >= len(s) {
			return info, errSyntax
		}
		switch c := s[j]; {
		case c == '"':
			info.end = j + 1
			return info, nil
		case c == '\\':
			info.esc = true
			if j+1 >= len(s) {
				return info, errSyntax
			}
			switch s[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i = j + 2
			case 'u':
				if j+6 > len(s) || !isHex4(s[j+2:j+6]) {
					return info, errSyntax
				}
				i = j + 6
			default:
				return info, errSyntax
			}
		default: // a control character
			return info, errSyntax
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

// value scans the value at i (no leading space) and returns its end. It
// walks objects itself rather than through object: this is the scanner's
// inner loop, and a closure call per member costs in Wasm.
func (sc *scanner) value(i, depth int) (int, error) {
	s := sc.s
	if i >= len(s) {
		return i, errSyntax
	}
	switch c := s[i]; {
	case c == '"':
		info, err := sc.str(i)
		if err != nil {
			return i, err
		}
		if sc.onString != nil {
			sc.onString(info)
		}
		return info.end, nil
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return i, errSyntax
		}
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		i = sc.space(i + 1)
		if i < len(s) && s[i] == end {
			return i + 1, nil
		}
		for {
			if c == '{' {
				if i >= len(s) || s[i] != '"' {
					return i, errSyntax
				}
				k, err := sc.str(i)
				if err != nil {
					return i, err
				}
				i = sc.space(k.end)
				if i >= len(s) || s[i] != ':' {
					return i, errSyntax
				}
				i = sc.space(i + 1)
			}
			var err error
			if i, err = sc.value(i, depth+1); err != nil {
				return i, err
			}
			i = sc.space(i)
			if i >= len(s) {
				return i, errSyntax
			}
			switch s[i] {
			case ',':
				i = sc.space(i + 1)
			case end:
				return i + 1, nil
			default:
				return i, errSyntax
			}
		}
	case c == 't':
		return sc.literal(i, "true")
	case c == 'f':
		return sc.literal(i, "false")
	case c == 'n':
		return sc.literal(i, "null")
	case c == '-' || '0' <= c && c <= '9':
		return sc.number(i)
	}
	return i, errSyntax
}

func (sc *scanner) literal(i int, lit string) (int, error) {
	if len(sc.s)-i < len(lit) || string(sc.s[i:i+len(lit)]) != lit {
		return i, errSyntax
	}
	return i + len(lit), nil
}

func (sc *scanner) number(i int) (int, error) {
	s := sc.s
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
			return i, errSyntax
		}
	}
	if i < len(s) && s[i] == '.' {
		var ok bool
		if i, ok = digits(i + 1); !ok {
			return i, errSyntax
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		var ok bool
		if i, ok = digits(i); !ok {
			return i, errSyntax
		}
	}
	return i, nil
}

// validJSON reports whether s is one JSON value, surrounded by space at
// most; strings values are passed to onString.
func validJSON(s []byte, onString func(strInfo)) bool {
	sc := scanner{s: s, onString: onString}
	i, err := sc.value(sc.space(0), 0)
	return err == nil && sc.space(i) == len(s)
}

// objectMembers calls fn with the key (its raw literal, quotes included)
// and the raw value of each member of the object s, in order, after
// validating all of s. It reports false when s is not one valid object.
func objectMembers(s []byte, onString func(strInfo), fn func(key, value []byte)) bool {
	type member struct{ k0, k1, v0, v1 int }
	var members [8]member
	ms := members[:0]
	sc := scanner{s: s, onString: onString}
	i := sc.space(0)
	if i >= len(s) || s[i] != '{' {
		return false
	}
	end, err := sc.object(i, func(k strInfo, v0 int) (int, error) {
		v1, err := sc.value(v0, 1)
		if err == nil {
			ms = append(ms, member{k.start, k.end, v0, v1})
		}
		return v1, err
	})
	if err != nil || sc.space(end) != len(s) {
		return false
	}
	for _, m := range ms {
		fn(s[m.k0:m.k1], s[m.v0:m.v1])
	}
	return true
}

// unquote decodes the valid string literal lit (quotes included) the way
// encoding/json does.
func unquote(lit []byte, info strInfo) string {
	body := lit[1 : len(lit)-1]
	if info.high && !utf8.Valid(body) {
		// Invalid UTF-8 becomes U+FFFD; leave that rare case to
		// encoding/json.
		var s string
		_ = json.Unmarshal(lit, &s)
		return s
	}
	if !info.esc {
		return string(body)
	}
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); {
		j := len(body)
		if k := bytes.IndexByte(body[i:], '\\'); k >= 0 {
			j = i + k
		}
		out = append(out, body[i:j]...)
		if j >= len(body) {
			break
		}
		switch c := body[j+1]; c {
		case 'b':
			out, i = append(out, '\b'), j+2
		case 'f':
			out, i = append(out, '\f'), j+2
		case 'n':
			out, i = append(out, '\n'), j+2
		case 'r':
			out, i = append(out, '\r'), j+2
		case 't':
			out, i = append(out, '\t'), j+2
		case 'u':
			r := hex4(body[j+2:])
			i = j + 6
			if utf16.IsSurrogate(r) {
				r = utf8.RuneError
				if i+6 <= len(body) && body[i] == '\\' && body[i+1] == 'u' {
					if d := utf16.DecodeRune(hex4(body[j+2:]), hex4(body[i+2:])); d != utf8.RuneError {
						r, i = d, i+6
					}
				}
			}
			out = utf8.AppendRune(out, r)
		default: // '"', '\\', '/'
			out, i = append(out, c), j+2
		}
	}
	return string(out)
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string literal: what encoding/json
// writes, except that <, > and & are not escaped (they need no escaping
// outside HTML).
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	b := unsafeBytes(s)
	i := 0
	for i < len(b) {
		j, high := stringRun(b, i)
		if high {
			// Copy [i, j) rune by rune: invalid UTF-8 becomes U+FFFD and
			// U+2028, U+2029 are escaped, as encoding/json does.
			for k := i; k < j; {
				if b[k] < utf8.RuneSelf {
					k++
					continue
				}
				dst = append(dst, s[i:k]...)
				r, size := utf8.DecodeRuneInString(s[k:])
				switch {
				case r == utf8.RuneError && size == 1:
					dst = append(dst, `\ufffd`...)
				case r == '\u2028' || r == '\u2029':
					dst = append(dst, `\u202`...)
					dst = append(dst, hexDigits[r&0xf])
				default:
					dst = append(dst, s[k:k+size]...)
				}
				k += size
				i = k
			}
		}
		dst = append(dst, s[i:j]...)
		if j >= len(b) {
			break
		}
		switch c := b[j]; c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i = j + 1
	}
	return append(dst, '"')
}

func unsafeBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }
