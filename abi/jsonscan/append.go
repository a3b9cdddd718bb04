package jsonscan

import (
	"unicode/utf8"
	"unsafe"
)

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string literal: what encoding/json
// writes, except that <, > and & are not escaped (they need no escaping
// outside HTML). Invalid UTF-8 becomes U+FFFD, and U+2028 and U+2029 are
// escaped, as encoding/json does. Plain runs are copied 8 bytes at a
// time.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	// StringRun only reads b, which is s's bytes.
	b := unsafe.Slice(unsafe.StringData(s), len(s))
	i := 0
	for i < len(b) {
		j, high := StringRun(b, i)
		if high {
			// Copy [i, j) rune by rune.
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
