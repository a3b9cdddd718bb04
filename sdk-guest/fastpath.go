package guest

import (
	"crypto/rand"
	"encoding"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/abi/jsonscan"
)

// The bulk of a tool call crosses the SDK three times: in the input
// envelope, as string arguments, and as the output's text. encoding/json
// calls a step function per byte, several times over (Unmarshal
// validates, then decodes; Marshal of a Marshaler compacts what it
// returned), which compiled to Wasm costs about a microsecond per byte of
// a 3 MB argument. So each crossing has a fast path built on package
// jsonscan, which steps over string contents 8 bytes at a time: the
// envelope's one pass (envpass.go), the big strings here, and the
// output's text. Each falls back to encoding/json whenever the input is
// unusual, so that errors and edge cases keep encoding/json's behaviour.

// bigString is the length from which a string argument skips
// encoding/json.
const bigString = 4 << 10

// placeholderPrefix starts the stand-ins of big strings: a NUL and a
// random nonce, so no client can forge one.
var placeholderPrefix = sync.OnceValue(func() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "\x00mcphost-" + hex.EncodeToString(b[:]) + "-"
})

// decodeBig decodes args into in when they hold big string values and
// In's type lets them stand in (see substitutable): encoding/json decodes
// a copy of args with each big string replaced by a short placeholder,
// and the strings, unquoted here, replace the placeholders in the
// result. It reports false when it did nothing.
//
// known, when set, lists args' big strings as the envelope's scan found
// them (args is then valid): args is not scanned again.
func decodeBig[In any](args []byte, in *In, known *[]jsonscan.String) (bool, error) {
	if len(args) < bigString || !substitutable(reflect.TypeFor[In]()) {
		return false, nil
	}
	var bigs []jsonscan.String
	if known != nil {
		bigs = *known
	} else if !(jsonscan.Scanner{OnString: func(s jsonscan.String) {
		if s.End-s.Start >= bigString {
			bigs = append(bigs, s)
		}
	}}).Valid(args) {
		return false, nil
	}
	if len(bigs) == 0 {
		return false, nil
	}
	prefix := placeholderPrefix()
	small := make([]byte, 0, 256+len(bigs)*(len(prefix)+24))
	last := 0
	for n, s := range bigs {
		small = append(small, args[last:s.Start]...)
		small = append(small, `"\u0000`...)
		small = append(small, prefix[1:]...)
		small = strconv.AppendInt(small, int64(n), 10)
		small = append(small, '"')
		last = s.End
	}
	small = append(small, args[last:]...)
	if err := json.Unmarshal(small, in); err != nil {
		return true, err
	}
	fill(reflect.ValueOf(in).Elem(), func(s string) (string, bool) {
		rest, ok := strings.CutPrefix(s, prefix)
		if !ok {
			return "", false
		}
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 || n >= len(bigs) {
			return "", false
		}
		b := bigs[n]
		return jsonscan.Unquote(args[b.Start:b.End], b), true
	})
	return true, nil
}

var substitutableTypes sync.Map // reflect.Type → bool

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonNumber      = reflect.TypeFor[json.Number]()
)

// substitutable reports whether encoding/json decodes every string of t
// plainly, so that a placeholder can stand in for it: no custom
// unmarshalers, []byte (base64), json.Number or `,string` options
// anywhere in t.
func substitutable(t reflect.Type) bool {
	if v, ok := substitutableTypes.Load(t); ok {
		return v.(bool)
	}
	ok := substitutableType(t, map[reflect.Type]bool{})
	substitutableTypes.Store(t, ok)
	return ok
}

func substitutableType(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return true
	}
	seen[t] = true
	if t == jsonNumber || t.Implements(jsonUnmarshaler) || t.Implements(textUnmarshaler) ||
		reflect.PointerTo(t).Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return false
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return true
	case reflect.Interface:
		return t.NumMethod() == 0
	case reflect.Pointer, reflect.Array:
		return substitutableType(t.Elem(), seen)
	case reflect.Slice:
		return t.Elem().Kind() != reflect.Uint8 && substitutableType(t.Elem(), seen)
	case reflect.Map:
		return t.Key().Kind() == reflect.String && substitutableType(t.Key(), seen) && substitutableType(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			if _, opts, _ := strings.Cut(f.Tag.Get("json"), ","); strings.Contains(","+opts+",", ",string,") {
				return false
			}
			if !substitutableType(f.Type, seen) {
				return false
			}
		}
		return true
	}
	return false
}

// fill replaces, through sub, the strings in v that encoding/json
// decoded: those of settable strings, slices, arrays, pointers, maps and
// interfaces holding what encoding/json puts in an any.
func fill(v reflect.Value, sub func(string) (string, bool)) {
	switch v.Kind() {
	case reflect.String:
		if s, ok := sub(v.String()); ok && v.CanSet() {
			v.SetString(s)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			fill(v.Elem(), sub)
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		if e := v.Elem(); e.Kind() == reflect.String {
			if s, ok := sub(e.String()); ok && v.CanSet() {
				v.Set(reflect.ValueOf(s))
			}
		} else {
			fill(e, sub)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				fill(f, sub)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), sub)
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(iter.Value())
			fill(e, sub)
			v.SetMapIndex(iter.Key(), e)
		}
	}
}

// appendCallToolResult encodes r as encoding/json would, with text blocks
// and structuredContent written by this package: a text is escaped in
// one pass and raw JSON is validated in one pass, where encoding/json
// escapes, then compacts what Content.MarshalJSON returned.
func appendCallToolResult(dst []byte, r *abi.CallToolResult) ([]byte, error) {
	dst = append(dst, `{"content":[`...)
	for i, c := range r.Content {
		if i > 0 {
			dst = append(dst, ',')
		}
		if c.Type == abi.ContentText && c.Annotations == nil && len(c.Meta) == 0 {
			dst = append(dst, `{"type":"text","text":`...)
			dst = jsonscan.AppendString(dst, c.Text)
			dst = append(dst, '}')
			continue
		}
		b, err := json.Marshal(c)
		if err != nil {
			return nil, err
		}
		dst = append(dst, b...)
	}
	dst = append(dst, ']')
	var err error
	if dst, err = appendRaw(dst, `,"structuredContent":`, r.StructuredContent); err != nil {
		return nil, err
	}
	if r.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	if dst, err = appendRaw(dst, `,"_meta":`, r.Meta); err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

// resultSize guesses the encoded size of r, so that the output is
// allocated once: a few megabytes of text copied again when the buffer
// grows cost the guest as much as encoding them.
func resultSize(r *abi.CallToolResult) int {
	n := 64 + len(r.StructuredContent) + len(r.Meta)
	for _, c := range r.Content {
		n += 64 + len(c.Text) + len(c.Data) + len(c.URI) + len(c.Name) + len(c.Description) + len(c.Meta)
	}
	return n + n/64 // room for some escapes
}

// appendRaw appends key and raw when raw is set (omitempty), after
// checking that raw is valid JSON.
func appendRaw(dst []byte, key string, raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return dst, nil
	}
	if !jsonscan.Valid(raw) {
		_, err := json.Marshal(raw) // encoding/json's error
		return nil, err
	}
	dst = append(dst, key...)
	return append(dst, raw...), nil
}

// bigArgs returns the big strings of args when args is the call's
// arguments as decodeInputFast found them, nil otherwise.
func (c *Context) bigArgs(args json.RawMessage) *[]jsonscan.String {
	if c == nil || !c.bigsSet || len(args) != len(c.bigsOf) || len(args) == 0 || &args[0] != &c.bigsOf[0] {
		return nil
	}
	return &c.bigs
}

// setBigArgs keeps, rebased to args, the big strings of input that lie
// in args, a slice of input.
func (c *Context) setBigArgs(input, args []byte, bigs []jsonscan.String) {
	if len(args) == 0 {
		return
	}
	start := cap(input) - cap(args)
	end := start + len(args)
	c.bigs = c.bigs[:0]
	for _, b := range bigs {
		if b.Start >= start && b.End <= end {
			b.Start, b.End = b.Start-start, b.End-start
			c.bigs = append(c.bigs, b)
		}
	}
	c.bigsOf, c.bigsSet = args, true
}
