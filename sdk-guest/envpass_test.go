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

// callToolSlow is the reference decoding of a call_tool envelope:
// encoding/json decodes abi.Input, then abi.CallToolParams.
func callToolSlow(input []byte) (*abi.CallToolParams, abi.Context, error) {
	var in abi.Input
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, abi.Context{}, err
	}
	if len(in.Request) == 0 || string(in.Request) == "null" {
		return nil, in.Context, nil
	}
	var p abi.CallToolParams
	if err := json.Unmarshal(in.Request, &p); err != nil {
		return nil, in.Context, err
	}
	return &p, in.Context, nil
}

// checkCallTool compares the one-pass decoding of input with
// callToolSlow, with decodeInput and with the flat decoders of the
// arguments.
func checkCallTool(t *testing.T, input []byte) {
	t.Helper()
	wantP, wantC, werr := callToolSlow(input)
	ctx := &Context{}
	p, ok := decodeInputFast[abi.CallToolParams](ctx, input)
	if ok {
		if werr != nil {
			t.Fatalf("decodeInputFast(%q) took it; encoding/json: %v", input, werr)
		}
		if (p == nil) != (wantP == nil) || p != nil && !reflect.DeepEqual(*p, *wantP) {
			t.Fatalf("decodeInputFast(%q) = %+v; encoding/json: %+v", input, p, wantP)
		}
		if !reflect.DeepEqual(normalizeContext(ctx.Context), normalizeContext(wantC)) {
			t.Fatalf("decodeInputFast(%q): context %+v; encoding/json: %+v", input, ctx.Context, wantC)
		}
		if p != nil {
			checkMembers[flatStrings](t, ctx, p.Arguments)
			checkMembers[flatMixed](t, ctx, p.Arguments)
		}
	}
	// Through decodeInput, errors and results are those of the slow path.
	ctx2 := &Context{}
	got, err := decodeInput[abi.CallToolParams](ctx2, input, true)
	ctx3 := &Context{}
	slow, serr := decodeInputSlow[abi.CallToolParams](ctx3, input, true)
	if (err != nil) != (serr != nil) || err != nil && err.Error() != serr.Error() {
		t.Fatalf("decodeInput(%q): error %v; slow path: %v", input, err, serr)
	}
	if err != nil {
		return
	}
	if !reflect.DeepEqual(*got, *slow) || !reflect.DeepEqual(normalizeContext(ctx2.Context), normalizeContext(ctx3.Context)) {
		t.Fatalf("decodeInput(%q) = %+v, %+v; slow path: %+v, %+v", input, *got, ctx2.Context, *slow, ctx3.Context)
	}
}

// checkMembers checks that the flat decoder of T, given the members the
// envelope's scan recorded, agrees with encoding/json on args.
func checkMembers[T any](t *testing.T, ctx *Context, args []byte) {
	t.Helper()
	plan := flatPlanOf(reflect.TypeFor[T]())
	ms, ok := ctx.argMembers(args)
	if !ok {
		return
	}
	var v T
	if _, ok := plan.decodeMembers(args, ms, unsafe.Pointer(&v)); !ok {
		return
	}
	var want T
	if err := json.Unmarshal(args, &want); err != nil || !reflect.DeepEqual(v, want) {
		t.Fatalf("%T from members of %q: %+v; encoding/json: %+v, %v", v, args, v, want, err)
	}
	got, _, _, err := decodeArgs[T](ctx, plan, args)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeArgs %T from %q: %+v, %v; encoding/json: %+v", v, args, got, err, want)
	}
}

var callToolSeeds = []string{
	`{"request":{"name":"echo","arguments":{"text":"hello world"}},"context":{"id":1,"_meta":{"progressToken":"t"},"protocolVersion":"2025-11-25","plugin":"wasm"}}`,
	` { "context" : { "plugin" : "p" , "id" : "x" } , "request" : { "arguments" : { "s" : "a\n" , "i8" : -3 } , "name" : "t\u00e9" } } `,
	`{"request":{"name":"t","arguments":{"text":"a","text":null,"x":[1,{"s":2}]},"_meta":{"k":1}},"context":null}`,
	`{"request":null,"context":{}}`,
	`{"request":{"name":null,"arguments":null}}`,
	`{"request":{"name":1}}`,
	`{"request":{"NAME":"x"}}`,
	`{"request":{"name":"a","name":"b"}}`,
	`{"request":{"n\u0061me":"x"}}`,
	`{"request":{"name":"x","arguments":[1,2]}}`,
	`{"request":{"name":"x","arguments":{"TEXT":"x","te\u0078t":"y"}}}`,
	`{"request":{},"request":{}}`,
	`{"Request":{"name":"x"}}`,
	`{"request":[],"context":{}}`,
	`{"request":"x"}`,
	`{"request":{"name":"x"},"context":{"id":null}}`,
	`{"request":{"name":"x"},"context":{"plugin":"a\nb","ID":1}}`,
	`{"request":{"name":"x"},"context":{"plugin":"a","plugin":"b","id":1,"id":2}}`,
	`{"request":{"name":"x"},"context":[1]}`,
	`{"request":{"name":"x"},"context":{"protocolVersion":7}}`,
	"{\"request\":{\"name\":\"\xff\",\"arguments\":{\"s\":\"\xff\"}}}",
	`{"request":{"name":"x","arguments":{"f32":1e39,"u8":256,"b":true}}}`,
	`{"request":{"name":"x"}} x`,
	`{"request":{"name":"x"},}`,
	`{}`,
	``,
	`null`,
	`[]`,
}

func TestDecodeInputFastMatchesEncodingJSON(t *testing.T) {
	for _, s := range callToolSeeds {
		checkCallTool(t, []byte(s))
	}
	big := strings.Repeat("w", bigString) + `\"é`
	checkCallTool(t, []byte(`{"request":{"name":"x","arguments":{"s":"`+big+`","other":["`+big+`"]}},"context":{"_meta":{"k":"`+big+`"}}}`))
}

// TestDecodeInputOnePass: the host's envelope is taken by the one pass,
// with the arguments' members recorded for the flat decoder.
func TestDecodeInputOnePass(t *testing.T) {
	ctx := &Context{}
	p, ok := decodeInputFast[abi.CallToolParams](ctx, []byte(callToolSeeds[0]))
	if !ok || p == nil || p.Name != "echo" {
		t.Fatalf("decodeInputFast = %+v, %v", p, ok)
	}
	ms, ok := ctx.argMembers(p.Arguments)
	if !ok || len(ms) != 1 || !bytes.Equal(p.Arguments[ms[0].V0:ms[0].V1], []byte(`"hello world"`)) {
		t.Fatalf("members %+v, %v", ms, ok)
	}
}

// FuzzDecodeCallTool compares the one-pass decoding of call_tool
// envelopes with encoding/json's decoding of abi.Input and
// abi.CallToolParams: equal results where it answers, and through
// decodeInput equal results and equal error-ness everywhere.
func FuzzDecodeCallTool(f *testing.F) {
	for _, s := range callToolSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		checkCallTool(t, input)
	})
}

// BenchmarkCallToolDecode compares, in one process, the one-pass
// decoding of the host's call_tool envelope and of flat arguments with
// encoding/json's (the envelope, then the arguments), and reports the
// ratio. Under Wasm both run 5-10x slower, encoding/json's reflection
// most.
func BenchmarkCallToolDecode(b *testing.B) {
	input := []byte(callToolSeeds[0])
	type echoIn struct {
		Text string `json:"text"`
	}
	plan := flatPlanOf(reflect.TypeFor[echoIn]())
	var fast, slow float64
	b.Run("onepass", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctx := &Context{}
			p, ok := decodeInputFast[abi.CallToolParams](ctx, input)
			if !ok {
				b.Fatal("not taken")
			}
			if in, _, _, err := decodeArgs[echoIn](ctx, plan, p.Arguments); err != nil || in.Text == "" {
				b.Fatal("not decoded")
			}
		}
		fast = float64(b.Elapsed()) / float64(b.N)
	})
	b.Run("encodingjson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ctx := &Context{}
			p, err := decodeInputSlow[abi.CallToolParams](ctx, input, true)
			if err != nil {
				b.Fatal(err)
			}
			if in, _, _, err := decodeArgs[echoIn](ctx, nil, p.Arguments); err != nil || in.Text == "" {
				b.Fatal("not decoded")
			}
		}
		slow = float64(b.Elapsed()) / float64(b.N)
		if fast > 0 {
			b.ReportMetric(slow/fast, "x-onepass")
		}
	})
}
