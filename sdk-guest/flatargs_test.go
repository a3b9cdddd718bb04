package guest

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/mcphost/mcphost/abi"
)

type flatStrings struct {
	Text   string `json:"text"`
	Name   string `json:"name,omitempty"`
	Skip   string `json:"-"`
	Dash   string `json:"-,"`
	Plain  string
	Mode   flatMode `json:"mode"`
	hidden string
}

type flatMode string

type flatMixed struct {
	I   int     `json:"i"`
	I8  int8    `json:"i8"`
	I16 int16   `json:"i16"`
	I32 int32   `json:"i32"`
	I64 int64   `json:"i64"`
	U   uint    `json:"u"`
	U8  uint8   `json:"u8"`
	U16 uint16  `json:"u16"`
	U32 uint32  `json:"u32"`
	U64 uint64  `json:"u64"`
	F32 float32 `json:"f32"`
	F64 float64 `json:"f64"`
	B   bool    `json:"b"`
	S   string  `json:"s"`
}

type textLevel int

func (l *textLevel) UnmarshalText(b []byte) error { *l = textLevel(len(b)); return nil }

type jsonStruct struct{ A string }

func (j *jsonStruct) UnmarshalJSON(b []byte) error { j.A = string(b); return nil }

func TestFlatPlanOf(t *testing.T) {
	if p := flatPlanOf(reflect.TypeFor[flatStrings]()); p == nil || len(p.fields) != 5 {
		t.Errorf("flatStrings: plan %+v; want 5 fields (text, name, -, Plain, mode)", p)
	}
	if p := flatPlanOf(reflect.TypeFor[flatMixed]()); p == nil || len(p.fields) != 14 {
		t.Errorf("flatMixed: plan %+v; want 14 fields", p)
	}
	if p := flatPlanOf(reflect.TypeFor[struct{}]()); p == nil {
		t.Errorf("struct{}: no plan; want an empty one")
	}
	type embedded struct{ flatMode }
	type inner struct{ A string }
	for name, typ := range map[string]reflect.Type{
		"non-struct":    reflect.TypeFor[map[string]string](),
		"pointer":       reflect.TypeFor[*flatStrings](),
		"embedded":      reflect.TypeFor[embedded](),
		"pointer field": reflect.TypeFor[struct{ P *string }](),
		"slice field":   reflect.TypeFor[struct{ L []string }](),
		"struct field":  reflect.TypeFor[struct{ In inner }](),
		"any field":     reflect.TypeFor[struct{ X any }](),
		"string option": reflect.TypeFor[struct {
			N int `json:"n,string"`
		}](),
		"TextUnmarshaler": reflect.TypeFor[struct{ L textLevel }](),
		"Unmarshaler":     reflect.TypeFor[jsonStruct](),
		"json.Number":     reflect.TypeFor[struct{ N json.Number }](),
		"same names": reflect.TypeFor[struct {
			A string
			B string `json:"A"`
		}](),
		"odd tag name": reflect.TypeFor[struct {
			A string `json:"a\\b"`
		}](),
		"unicode name": reflect.TypeFor[struct{ Ä string }](),
	} {
		if p := flatPlanOf(typ); p != nil {
			t.Errorf("%s: plan %+v; want none", name, p)
		}
	}
}

// TestFlatDecode checks which inputs the flat decoder takes for each type
// and that what it takes, and what it leaves to encoding/json, ends as
// encoding/json's result. A key unknown to a type is merely skipped.
func TestFlatDecode(t *testing.T) {
	for _, c := range []struct {
		in          string
		strs, mixed bool // taken by the flat decoder of flatStrings, flatMixed
	}{
		{`{"text":"hi","Plain":"p","mode":"m","-":"d"}`, true, true},
		{` { "text" : "a\nb\u00e9\ud83d\ude00\ud800\"\\\/" , "name":"é" } `, true, true},
		{`{}`, true, true},
		{`{"other":[1,{"text":"no"}],"text":"a","more":{"x":null}}`, true, true},
		{`{"text":"a","text":"b"}`, true, true},  // the last wins
		{`{"text":"a","text":null}`, true, true}, // null leaves it
		{`{"text":"bad` + "\xff\xfe" + `utf8"}`, true, true},
		{`{"Skip":"x","hidden":"y"}`, true, true}, // neither is decoded
		{`{"i8":-128,"i16":32767,"u8":255,"u16":65535,"u32":4294967295,"i64":-9223372036854775808,"u64":18446744073709551615}`, true, true},
		{`{"f32":3.4e38,"f64":-1.5e-300,"b":true,"s":"x","i":-0,"u":0}`, true, true},
		{`{"b":false,"b":null,"f32":1e-50}`, true, true},
		{`{"TEXT":"x"}`, false, true},       // encoding/json folds case
		{`{"te\u0078t":"x"}`, false, false}, // escaped key
		{"{\"\u212aey\":1}", false, false},  // not ASCII (the Kelvin sign folds to k)
		{`{"i8":128}`, true, false},         // overflow
		{`{"u16":65536}`, true, false},
		{`{"i64":9223372036854775808}`, true, false},
		{`{"f32":1e39}`, true, false},
		{`{"f64":1e400}`, true, false},
		{`{"i":1.5}`, true, false},
		{`{"i":1e2}`, true, false},
		{`{"u":-1}`, true, false},
		{`{"i":"1"}`, true, false},
		{`{"s":1}`, true, false},
		{`{"s":true,"i":2}`, true, false},
		{`{"b":1}`, true, false},
		{`{"b":"true"}`, true, false},
		{`{"s":{}}`, true, false},
		{`{"s":[]}`, true, false},
		{`[]`, false, false},
		{`"x"`, false, false},
		{`{"s":"a"} x`, false, false},
		{`{"s":"a",}`, false, false},
		{`{"s":"a"`, false, false},
		{`{"s":"a` + "\n" + `"}`, false, false},
	} {
		checkFlat[flatStrings](t, []byte(c.in), c.strs)
		checkFlat[flatMixed](t, []byte(c.in), c.mixed)
	}
}

// checkFlat checks whether the flat decoder of T takes in, as the
// arguments of a call_tool envelope, and compares decodeArgs with
// encoding/json on in.
func checkFlat[T any](t *testing.T, in []byte, fast bool) {
	t.Helper()
	plan := flatPlanOf(reflect.TypeFor[T]())
	ctx, args := scannedArgs(in)
	ms, ok := ctx.argMembers(args)
	var v T
	if ok {
		_, ok = plan.decodeMembers(args, ms, unsafe.Pointer(&v))
	}
	if ok != fast {
		t.Errorf("%T: flat decoder of %q: %v; want %v", v, in, ok, fast)
	}
	compareFlat[T](t, plan, in)
}

// scannedArgs passes in as the arguments of a call_tool envelope through
// the envelope's scan, and returns the call's context and arguments: in
// itself, the members recorded, when the scan takes the envelope.
func scannedArgs(in []byte) (*Context, []byte) {
	ctx := &Context{}
	input := append(append([]byte(`{"request":{"name":"t","arguments":`), in...), `}}`...)
	// in must be the arguments whole (`0,"x":1` would be a 0 and a member).
	if p, ok := decodeInputFast[abi.CallToolParams](ctx, input); ok && p != nil && bytes.Equal(p.Arguments, bytes.TrimSpace(in)) {
		return ctx, p.Arguments
	}
	return &Context{}, in
}

// compareFlat fails when decodeArgs differs from encoding/json on in.
func compareFlat[T any](t *testing.T, plan *flatPlan, in []byte) {
	t.Helper()
	in = bytes.TrimSpace(in) // as decodeArgs does
	if len(in) == 0 {
		return // decodeArgs takes no arguments as null
	}
	var want T
	werr := json.Unmarshal(in, &want)
	ctx, args := scannedArgs(in)
	got, _, _, err := decodeArgs[T](ctx, plan, args)
	switch {
	case werr != nil:
		if err == nil || err.Error() != "invalid arguments: "+werr.Error() {
			t.Errorf("%T from %q: error %v; encoding/json: %v", want, in, err, werr)
		}
	case err != nil:
		t.Errorf("%T from %q: error %v; encoding/json: none", want, in, err)
	case !reflect.DeepEqual(got, want):
		t.Errorf("%T from %q: %+v; encoding/json: %+v", want, in, got, want)
	}
}

// TestDispatchFlatBigArguments checks that big strings reach a flat
// struct as encoding/json decodes them, through the envelope's scan.
func TestDispatchFlatBigArguments(t *testing.T) {
	useRegistry(t)
	type flatBig struct {
		S  string `json:"s,omitempty"`
		I8 int8   `json:"i8,omitempty"`
	}
	var got flatBig
	AddTool(Tool{Name: "flat"}, func(_ *Context, in flatBig) (*Result, error) {
		got = in
		return TextResult("ok"), nil
	})
	big := strings.Repeat("z", bigString) + `\n\"é\ud83d\ude00`
	args := `{"other":"` + big + `","s":"` + big + `","i8":-3,"other2":["` + big + `"]}`
	if _, err := Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"flat","arguments":`+args+`}}`)); err != nil {
		t.Fatal(err)
	}
	var want flatBig
	if err := json.Unmarshal([]byte(args), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("handler got %.60q, %d…; want %.60q, %d", got.S, got.I8, want.S, want.I8)
	}
}
