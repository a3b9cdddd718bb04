package guest

import (
	"bytes"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/abi/jsonscan"
)

// Most tools take a flat struct of strings, numbers and booleans. Decoding
// one with encoding/json costs a Go guest most of a small call under Wasm
// (its reflection runs about 7x slower there than natively), so such
// arguments are decoded here, from the members the envelope's one pass
// recorded (envpass.go). The decoder reproduces encoding/json only on
// inputs where that is simple to get exactly right, and reports false on
// anything else, so that encoding/json decodes the whole value again and
// its results and errors stay the reference.

// flatField is a field that a flatPlan sets.
type flatField struct {
	name   string // JSON name: a key must be spelled exactly so
	offset uintptr
	kind   reflect.Kind
	bits   int // of numbers, for the overflow check
}

// flatPlan decodes a JSON object into a struct of scalar fields.
type flatPlan struct {
	fields []flatField
}

// flatPlanOf returns the plan of t, or nil when t is not a struct whose
// decoding by encoding/json the plan reproduces: every exported field must
// be a string, bool, integer or float without custom unmarshaling and
// with a plainly spelled, unique JSON name.
func flatPlanOf(t reflect.Type) *flatPlan {
	if t.Kind() != reflect.Struct || customDecoded(t) {
		return nil
	}
	p := &flatPlan{fields: []flatField{}}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil // encoding/json promotes the fields of embedded structs
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if strings.Contains(","+opts+",", ",string,") {
			return nil // the value is quoted
		}
		if name == "" {
			name = f.Name
		}
		// encoding/json ignores fields whose names collide; leave that to it.
		if !plainName(name) || p.field(name) != nil || !flatKind(f.Type) {
			return nil
		}
		ff := flatField{name: name, offset: f.Offset, kind: f.Type.Kind()}
		if ff.kind != reflect.String && ff.kind != reflect.Bool {
			ff.bits = f.Type.Bits()
		}
		p.fields = append(p.fields, ff)
	}
	return p
}

// customDecoded reports whether encoding/json decodes t other than by its
// kind: through an unmarshaler, or as a json.Number.
func customDecoded(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t == jsonNumber || t.Implements(jsonUnmarshaler) || t.Implements(textUnmarshaler) ||
		pt.Implements(jsonUnmarshaler) || pt.Implements(textUnmarshaler)
}

func flatKind(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return !customDecoded(t)
	}
	return false
}

// plainName reports whether name is non-empty printable ASCII that JSON
// spells without escapes and encoding/json accepts as a tag name: a key
// then names the field exactly when its raw bytes equal name.
func plainName(name string) bool {
	for i := range len(name) {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			strings.IndexByte("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c) >= 0) {
			return false
		}
	}
	return name != ""
}

func (p *flatPlan) field(name string) *flatField {
	for i := range p.fields {
		if p.fields[i].name == name {
			return &p.fields[i]
		}
	}
	return nil
}

// lookup returns the index of the field that key (raw, quotes excluded)
// names, -1 for an unknown key; ok is false when encoding/json would
// match key to a field case-insensitively.
func (p *flatPlan) lookup(key []byte) (i int, ok bool) {
	for i := range p.fields {
		if p.fields[i].name == string(key) {
			return i, true
		}
	}
	for i := range p.fields {
		if bytes.EqualFold(key, []byte(p.fields[i].name)) {
			return -1, false
		}
	}
	return -1, true
}

// decodeMembers sets the fields of the struct at dst from the members
// ms of the object args, as a scan recorded them (see scanArgMembers),
// without scanning args again, and returns the fields whose keys were
// present (bit i for field i, of the first 64). It reports false,
// perhaps having set some fields, when encoding/json must decode args
// instead: a key is escaped, not ASCII or matches a field only
// case-insensitively, or a value is not one that encoding/json stores as
// is in its field.
func (p *flatPlan) decodeMembers(args []byte, ms []abi.ArgMember, dst unsafe.Pointer) (seen uint64, ok bool) {
	for i := range ms {
		m := &ms[i]
		if m.Flags&abi.MemberKeyPlain == 0 {
			return 0, false
		}
		fi, ok := p.lookup(args[m.K0+1 : m.K1-1])
		if !ok {
			return 0, false
		}
		if fi < 0 {
			continue
		}
		seen |= 1 << (fi & 63)
		f := &p.fields[fi]
		v := args[m.V0:m.V1]
		if m.Flags&abi.MemberString != 0 {
			if f.kind != reflect.String {
				return 0, false
			}
			*(*string)(unsafe.Add(dst, f.offset)) = jsonscan.Unquote(v, jsonscan.String{
				Escaped: m.Flags&abi.MemberEscaped != 0, High: m.Flags&abi.MemberHigh != 0})
		} else if !f.set(unsafe.Add(dst, f.offset), v) {
			return 0, false
		}
	}
	return seen, true
}

// requiredFields returns the indexes of the fields that names (a tool's
// required arguments) name, in the order of names; ok is false when a
// name is not one of the plan's first 64 fields.
func (p *flatPlan) requiredFields(names []string) (idx []int, ok bool) {
	for _, name := range names {
		i := slices.IndexFunc(p.fields, func(f flatField) bool { return f.name == name })
		if i < 0 || i >= 64 {
			return nil, false
		}
		idx = append(idx, i)
	}
	return idx, true
}

// set stores the valid JSON value lit, which is not a string, in the
// field at ptr, reporting false when encoding/json would not store it as
// is (a type mismatch or an overflow: an error there).
func (f *flatField) set(ptr unsafe.Pointer, lit []byte) bool {
	if string(lit) == "null" {
		return true // encoding/json leaves a scalar unchanged
	}
	switch f.kind {
	case reflect.Bool:
		switch string(lit) {
		case "true":
			*(*bool)(ptr) = true
		case "false":
			*(*bool)(ptr) = false
		default:
			return false
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(string(lit), 10, 64)
		if err != nil || f.bits < 64 && (n < -1<<(f.bits-1) || n >= 1<<(f.bits-1)) {
			return false
		}
		storeInt(ptr, f.kind, n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, err := strconv.ParseUint(string(lit), 10, 64)
		if err != nil || f.bits < 64 && n >= 1<<f.bits {
			return false
		}
		storeUint(ptr, f.kind, n)
	case reflect.Float32, reflect.Float64:
		// ParseFloat fails, as encoding/json does, on a float32 overflow.
		n, err := strconv.ParseFloat(string(lit), f.bits)
		if err != nil {
			return false
		}
		if f.kind == reflect.Float32 {
			*(*float32)(ptr) = float32(n)
		} else {
			*(*float64)(ptr) = n
		}
	default: // a string field given a number, bool, array or object
		return false
	}
	return true
}

func storeInt(ptr unsafe.Pointer, k reflect.Kind, n int64) {
	switch k {
	case reflect.Int:
		*(*int)(ptr) = int(n)
	case reflect.Int8:
		*(*int8)(ptr) = int8(n)
	case reflect.Int16:
		*(*int16)(ptr) = int16(n)
	case reflect.Int32:
		*(*int32)(ptr) = int32(n)
	default:
		*(*int64)(ptr) = n
	}
}

func storeUint(ptr unsafe.Pointer, k reflect.Kind, n uint64) {
	switch k {
	case reflect.Uint:
		*(*uint)(ptr) = uint(n)
	case reflect.Uint8:
		*(*uint8)(ptr) = uint8(n)
	case reflect.Uint16:
		*(*uint16)(ptr) = uint16(n)
	case reflect.Uint32:
		*(*uint32)(ptr) = uint32(n)
	case reflect.Uintptr:
		*(*uintptr)(ptr) = uintptr(n)
	default:
		*(*uint64)(ptr) = n
	}
}
