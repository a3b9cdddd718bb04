package jsonscan

import (
	"bytes"
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
)

// Decode returns the value of the one JSON document s: what
// json.Decoder with UseNumber gives (map[string]any, []any, string,
// json.Number, bool or nil), built in the same pass that validates s.
// Space around the value is allowed; anything else after it is an error.
func Decode(s []byte) (any, error) {
	d := decoder{s: s}
	v, i, err := d.value(SkipSpace(s, 0), 0)
	if err != nil {
		return nil, err
	}
	if SkipSpace(s, i) != len(s) {
		return nil, ErrSyntax
	}
	return v, nil
}

type decoder struct{ s []byte }

func (d *decoder) value(i, depth int) (any, int, error) {
	s := d.s
	if i >= len(s) {
		return nil, i, ErrSyntax
	}
	switch c := s[i]; {
	case c == '"':
		info, err := ScanString(s, i)
		if err != nil {
			return nil, i, err
		}
		return Unquote(s[info.Start:info.End], info), info.End, nil
	case c == '{':
		if depth >= MaxDepth {
			return nil, i, ErrSyntax
		}
		m := map[string]any{}
		i = SkipSpace(s, i+1)
		if i < len(s) && s[i] == '}' {
			return m, i + 1, nil
		}
		for more := true; more; {
			k, v0, err := memberKey(s, i)
			if err != nil {
				return nil, v0, err
			}
			v, j, err := d.value(v0, depth+1)
			if err != nil {
				return nil, j, err
			}
			m[Unquote(s[k.Start:k.End], k)] = v
			if i, more, err = next(s, j, '}'); err != nil {
				return nil, i, err
			}
		}
		return m, i, nil
	case c == '[':
		if depth >= MaxDepth {
			return nil, i, ErrSyntax
		}
		a := []any{}
		i = SkipSpace(s, i+1)
		if i < len(s) && s[i] == ']' {
			return a, i + 1, nil
		}
		for more := true; more; {
			v, j, err := d.value(i, depth+1)
			if err != nil {
				return nil, j, err
			}
			a = append(a, v)
			if i, more, err = next(s, j, ']'); err != nil {
				return nil, i, err
			}
		}
		return a, i, nil
	case c == 't':
		j, err := literal(s, i, "true")
		return true, j, err
	case c == 'f':
		j, err := literal(s, i, "false")
		return false, j, err
	case c == 'n':
		j, err := literal(s, i, "null")
		return nil, j, err
	case c == '-' || '0' <= c && c <= '9':
		j, err := number(s, i)
		if err != nil {
			return nil, j, err
		}
		return json.Number(s[i:j]), j, nil
	}
	return nil, i, ErrSyntax
}

// Unquote decodes the valid string literal lit (quotes included), which
// ScanString described as info, the way encoding/json does.
func Unquote(lit []byte, info String) string {
	body := lit[1 : len(lit)-1]
	if info.High && !utf8.Valid(body) {
		// encoding/json turns invalid UTF-8 into U+FFFD; leave that
		// rare case to it.
		var s string
		_ = json.Unmarshal(lit, &s)
		return s
	}
	if !info.Escaped {
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
