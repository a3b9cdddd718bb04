package abi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/mcphost/mcphost/abi/jsonscan"
)

// The output of [ExportCallToolMembers] is a CallToolResult as JSON, or a
// result frame: the result most tools give (text blocks, perhaps
// structured content, perhaps isError) as bytes behind lengths, which the
// host writes as JSON itself, natively, many times faster than a guest
// does. On the wire a result frame is a zero byte (JSON never starts with
// one), a flags byte ([ResultIsError]), a little-endian uint32 count of
// text blocks and each block's text behind a uint32 length, and last the
// structured content (JSON) behind a uint32 length, 0 for none.

// ResultIsError is the flag of a result frame whose result has isError.
const ResultIsError = 1

// IsResultFrame reports whether out, an output of ExportCallToolMembers,
// is a result frame rather than JSON.
func IsResultFrame(out []byte) bool { return len(out) > 0 && out[0] == 0 }

// AppendResultFrame appends the result frame of r to dst and reports
// true, or reports false, having appended nothing, when r has more than a
// frame holds: content other than plain text blocks (type "text", no
// annotations, no _meta), _meta, or structured content that is not valid
// JSON. A text block's other fields are not part of it, as they are not
// of its JSON.
func AppendResultFrame(dst []byte, r *CallToolResult) ([]byte, bool) {
	if len(r.Meta) > 0 || len(r.Content) > math.MaxUint32 || len(r.StructuredContent) > math.MaxUint32 ||
		len(r.StructuredContent) > 0 && !jsonscan.Valid(r.StructuredContent) {
		return dst, false
	}
	for i := range r.Content {
		c := &r.Content[i]
		if c.Type != ContentText || c.Annotations != nil || len(c.Meta) > 0 || len(c.Text) > math.MaxUint32 {
			return dst, false
		}
	}
	flags := byte(0)
	if r.IsError {
		flags |= ResultIsError
	}
	dst = append(dst, 0, flags)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(r.Content)))
	for i := range r.Content {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(len(r.Content[i].Text)))
		dst = append(dst, r.Content[i].Text...)
	}
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(r.StructuredContent)))
	return append(dst, r.StructuredContent...), true
}

// ResultFrameSize is the length of r's result frame, when it has one.
func ResultFrameSize(r *CallToolResult) int {
	n := 2 + 4 + 4 + len(r.StructuredContent)
	for i := range r.Content {
		n += 4 + len(r.Content[i].Text)
	}
	return n
}

// ErrResultFrame is the error of a malformed result frame.
var ErrResultFrame = errors.New("malformed result frame")

// AppendResultJSON appends to dst the CallToolResult of frame, a result
// frame, as JSON: the bytes the guest SDK writes for the result the frame
// was made from, strings as [jsonscan.AppendString] writes them. It
// returns the JSON, whether the result has isError, and its structured
// content (within the JSON), or an error wrapping ErrResultFrame when
// frame is not one: a length past its end, bytes after the structured
// content, structured content that is not valid JSON, or JSON longer
// than max bytes (max ≤ 0: no limit).
func AppendResultJSON(dst, frame []byte, max int) (out []byte, isError bool, structured []byte, err error) {
	if len(frame) < 2+4 || frame[0] != 0 {
		return dst, false, nil, fmt.Errorf("%w: no header", ErrResultFrame)
	}
	start := len(dst)
	isError = frame[1]&ResultIsError != 0
	n := binary.LittleEndian.Uint32(frame[2:])
	b := frame[6:]
	dst = append(dst, `{"content":[`...)
	for i := range n {
		text, rest, ok := lengthPrefixed(b)
		if !ok {
			return dst[:start], false, nil, fmt.Errorf("%w: text block %d runs past the end", ErrResultFrame, i)
		}
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"type":"text","text":`...)
		dst = jsonscan.AppendString(dst, unsafeString(text))
		dst = append(dst, '}')
		b = rest
		if max > 0 && len(dst)-start > max {
			return dst[:start], false, nil, fmt.Errorf("%w: its JSON exceeds %d bytes", ErrResultFrame, max)
		}
	}
	dst = append(dst, ']')
	sc, rest, ok := lengthPrefixed(b)
	switch {
	case !ok:
		return dst[:start], false, nil, fmt.Errorf("%w: structured content runs past the end", ErrResultFrame)
	case len(rest) > 0:
		return dst[:start], false, nil, fmt.Errorf("%w: %d bytes after the structured content", ErrResultFrame, len(rest))
	case len(sc) > 0 && !jsonscan.Valid(sc):
		return dst[:start], false, nil, fmt.Errorf("%w: structured content is not valid JSON", ErrResultFrame)
	}
	at := 0
	if len(sc) > 0 {
		dst = append(dst, `,"structuredContent":`...)
		at = len(dst)
		dst = append(dst, sc...)
	}
	if isError {
		dst = append(dst, `,"isError":true`...)
	}
	dst = append(dst, '}')
	if max > 0 && len(dst)-start > max {
		return dst[:start], false, nil, fmt.Errorf("%w: its JSON exceeds %d bytes", ErrResultFrame, max)
	}
	if len(sc) > 0 {
		structured = dst[at : at+len(sc) : at+len(sc)]
	}
	return dst, isError, structured, nil
}

// unsafeString is b as a string, for reading while b is not written.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// lengthPrefixed splits b into the bytes behind its uint32 length and the
// rest.
func lengthPrefixed(b []byte) (field, rest []byte, ok bool) {
	if len(b) < 4 {
		return nil, nil, false
	}
	n := binary.LittleEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return nil, nil, false
	}
	return b[4 : 4+n], b[4+n:], true
}
