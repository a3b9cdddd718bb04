package guest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// frameOf builds the frame the host sends for a call_tool envelope's
// request and context members, with the index of args's members.
func frameOf(name, args string, cc abi.Context) []byte {
	return frameIndexed(name, args, cc, abi.AppendArgMembers(nil, []byte(args)))
}

// asHost returns out, an output of the frame export, as the host reads
// it: a result frame written as JSON (abi.AppendResultJSON), JSON as is.
func asHost(out []byte) []byte {
	if !abi.IsResultFrame(out) {
		return out
	}
	js, _, _, err := abi.AppendResultJSON(nil, out, 0)
	if err != nil {
		return []byte("bad result frame: " + err.Error())
	}
	return js
}

// frameIndexed is frameOf with index as the frame's Members, whatever
// args holds.
func frameIndexed(name, args string, cc abi.Context, index []byte) []byte {
	return abi.AppendMembersFrame(nil, &abi.CallFrame{Name: []byte(name), ID: cc.ID, Meta: cc.Meta,
		ProtocolVersion: []byte(cc.ProtocolVersion), Plugin: []byte(cc.Plugin), Members: index, Arguments: []byte(args)})
}

// TestCallFrameMatchesEnvelope: a call through the frame export answers
// exactly as the same call through call_tool's envelope, output and
// error, and the handler sees the same Context and arguments: typed
// tools on the flat plan and off it, raw tools, required arguments,
// panics, unknown tools and raw output. So does the frame without the
// index of the arguments' members, and with an index that runs past
// their end: the guest then scans them itself.
func TestCallFrameMatchesEnvelope(t *testing.T) {
	useRegistry(t)
	type flat struct {
		Text string  `json:"text"`
		N    int     `json:"n,omitempty"`
		F    float64 `json:"f,omitempty"`
		OK   bool    `json:"ok,omitempty"`
	}
	type nested struct {
		Tags []string         `json:"tags"`
		Sub  map[string]int   `json:"sub,omitempty"`
		Raw  json.RawMessage  `json:"raw,omitempty"`
		Opt  *struct{ X int } `json:"opt,omitempty"`
	}
	seen := func(ctx *Context, what any) string {
		return fmt.Sprintf("id=%s meta=%s pv=%q plugin=%q in=%+v", ctx.ID, ctx.Meta, ctx.ProtocolVersion, ctx.Plugin, what)
	}
	AddTool(Tool{Name: "flat"}, func(ctx *Context, in flat) (*Result, error) { return TextResult(seen(ctx, in)), nil })
	AddTool(Tool{Name: "req", InputSchema: json.RawMessage(`{"type":"object","required":["text","n"]}`)},
		func(ctx *Context, in flat) (*Result, error) { return TextResult(seen(ctx, in)), nil })
	AddTool(Tool{Name: "nested"}, func(ctx *Context, in nested) (*Result, error) {
		return TextResult(seen(ctx, fmt.Sprintf("%v %v %s %v", in.Tags, in.Sub, in.Raw, in.Opt))), nil
	})
	AddToolOut(Tool{Name: "out"}, func(ctx *Context, in flat) (flat, error) { return in, nil })
	AddToolRaw(abi.Tool{Name: "raw"}, func(ctx *Context, args json.RawMessage) (*abi.CallToolResult, error) {
		return TextResult(seen(ctx, string(args))), nil
	})
	AddTool(Tool{Name: "fails"}, func(*Context, flat) (*Result, error) { return nil, errors.New("no luck") })
	AddTool(Tool{Name: "panics"}, func(*Context, flat) (*Result, error) { panic("boom") })
	AddTool(Tool{Name: "rawout"}, func(ctx *Context, _ flat) (*Result, error) {
		ctx.WriteRawOutput([]byte(`not json`))
		return nil, nil
	})
	big := strings.Repeat("ü", bigString)
	cc := abi.Context{ID: json.RawMessage(`"r-1"`), Meta: json.RawMessage(`{"progressToken":5}`), ProtocolVersion: "2025-11-25", Plugin: "p"}
	tests := []struct{ name, tool, args string }{
		{"flat", "flat", `{"text":"hi","n":3,"f":1.5,"ok":true}`},
		{"escaped", "flat", `{"text":"a\"b\u00e9\n","n":-1}`},
		{"space", "flat", ` { "text" : "hi" } `},
		{"case-folded key", "flat", `{"TEXT":"hi"}`},
		{"unknown key", "flat", `{"text":"hi","zzz":[1,{"a":2}]}`},
		{"repeated key", "flat", `{"text":"first","n":1,"text":"last"}`},
		{"escaped key", "flat", `{"t\u0065xt":"hi"}`},
		{"high bytes", "flat", `{"text":"héllo \u00e9"}`},
		{"invalid UTF-8", "flat", "{\"text\":\"a\xffb\"}"},
		{"wrong type", "flat", `{"text":5}`},
		{"overflow", "flat", `{"n":1e400}`},
		{"null", "flat", `null`},
		{"none", "flat", ``},
		{"not an object", "flat", `[1]`},
		{"big string", "flat", `{"text":"` + big + `"}`},
		{"required present", "req", `{"text":"","n":0}`},
		{"required null", "req", `{"text":null,"n":1}`},
		{"required missing", "req", `{"text":"x"}`},
		{"required missing all", "req", `{}`},
		{"required no args", "req", ``},
		{"nested", "nested", `{"tags":["a","b"],"sub":{"x":1},"raw":{"k":[1, 2]},"opt":{"X":4}}`},
		{"nested big", "nested", `{"tags":["` + big + `"]}`},
		{"out", "out", `{"text":"<b>","n":2}`},
		{"raw", "raw", `{"any": [1, 2]}`},
		{"raw null", "raw", `null`},
		{"raw none", "raw", ``},
		{"fails", "fails", `{}`},
		{"panics", "panics", `{}`},
		{"raw output", "rawout", `{}`},
		{"unknown tool", "nope", `{}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, err := json.Marshal(abi.Input{Context: cc})
			if err != nil {
				t.Fatal(err)
			}
			req := `{"name":` + fmt.Sprintf("%q", tc.tool)
			if tc.args != "" {
				req += `,"arguments":` + tc.args
			}
			env = append(env[:len(env)-1], []byte(`,"request":`+req+`}}`)...)
			want, wantErr := Dispatch(abi.ExportCallTool, env)
			misfit := abi.AppendArgMembers(nil, []byte(`{"k":"`+strings.Repeat("x", 3*bigString)+`"}`)) // past args' end
			for _, f := range []struct {
				name  string
				frame []byte
			}{
				{"frame", frameOf(tc.tool, tc.args, cc)},
				{"frame without an index", frameIndexed(tc.tool, tc.args, cc, nil)},
				{"frame with a misfit index", frameIndexed(tc.tool, tc.args, cc, misfit)},
			} {
				got, gotErr := CallFrame(f.frame)
				got = asHost(got)
				if !bytes.Equal(got, want) || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
					t.Errorf("%s: %.300s, %v\nenvelope: %.300s, %v", f.name, got, gotErr, want, wantErr)
				}
			}
		})
	}
	if _, err := CallFrame([]byte{1, 0, 0}); err == nil || !strings.Contains(err.Error(), "malformed call frame") {
		t.Errorf("a truncated frame: %v; want malformed call frame", err)
	}
}

// TestCallFrameAllocs: in steady state a frame call allocates nothing
// of the SDK's own: a handler that allocates nothing (an int argument, a
// result made once) costs no allocation, with the output buffer reused,
// and its output is the result's frame.
func TestCallFrameAllocs(t *testing.T) {
	useRegistry(t)
	fixed := TextResult("ok")
	AddTool(Tool{Name: "add", InputSchema: json.RawMessage(`{"type":"object","required":["n"]}`)},
		func(ctx *Context, in struct {
			N int `json:"n"`
		}) (*Result, error) {
			if in.N != 41 || len(ctx.Meta) == 0 {
				return Error("wrong arguments"), nil
			}
			return fixed, nil
		})
	frame := frameOf("add", `{"n":41,"other":"x"}`, abi.Context{ID: json.RawMessage(`7`), Meta: json.RawMessage(`{}`), ProtocolVersion: "2025-11-25", Plugin: "p"})
	var out []byte
	want, _ := abi.AppendResultFrame(nil, fixed)
	call := func() {
		var err error
		if out, err = std.callFrame(frame, out); err != nil || !bytes.Equal(out, want) {
			t.Fatalf("got %q, %v; want %q", out, err, want)
		}
	}
	call()
	if n := testing.AllocsPerRun(100, call); n != 0 {
		t.Errorf("allocations per frame call: %v; want 0", n)
	}
}

// TestContextTextResult: a Context's own result costs a frame call no
// allocation (the echo's one allocation is its decoded string), is
// encoded as TextResult's would be, is cleared once the call has used
// it, and a second one in the same call is a result of its own; off the
// frame export it is an ordinary result.
func TestContextTextResult(t *testing.T) {
	useRegistry(t)
	type in struct {
		Text string `json:"text"`
	}
	AddTool(Tool{Name: "echo"}, func(ctx *Context, in in) (*Result, error) { return ctx.TextResult(in.Text), nil })
	AddTool(Tool{Name: "two"}, func(ctx *Context, in in) (*Result, error) {
		a, b := ctx.TextResult("first"), ctx.TextResult(in.Text)
		if a == b || a.Content[0].Text != "first" {
			return Error("the second result overwrote the first"), nil
		}
		return NewResult(a.Content[0], b.Content[0]), nil
	})
	cc := abi.Context{ID: json.RawMessage(`7`), Meta: json.RawMessage(`{}`)}
	for _, tc := range []struct{ tool, want string }{
		{"echo", `{"content":[{"type":"text","text":"hello \"you\""}]}`},
		{"two", `{"content":[{"type":"text","text":"first"},{"type":"text","text":"hello \"you\""}]}`},
	} {
		frame := frameOf(tc.tool, `{"text":"hello \"you\""}`, cc)
		var out []byte
		var err error
		call := func() { out, err = std.callFrame(frame, out) }
		call()
		if err != nil || string(asHost(out)) != tc.want {
			t.Fatalf("%s: got %s, %v; want %s", tc.tool, asHost(out), err, tc.want)
		}
		if tc.tool == "echo" {
			if n := testing.AllocsPerRun(100, call); n != 1 {
				t.Errorf("allocations per echo call: %v; want 1, its string", n)
			}
		}
		if o := &std.frames.owned; o.taken || !reflect.ValueOf(o.c[0]).IsZero() || !reflect.ValueOf(o.r).IsZero() {
			t.Errorf("%s: after the call the owned result holds %+v", tc.tool, o)
		}
		env := `{"request":{"name":"` + tc.tool + `","arguments":{"text":"hello \"you\""}},"context":{}}`
		if got, err := Dispatch(abi.ExportCallTool, []byte(env)); err != nil || string(got) != tc.want {
			t.Errorf("%s through the envelope: %s, %v; want %s", tc.tool, got, err, tc.want)
		}
	}
}

// TestResultFrameMatchesJSON: a result that fits a result frame gets one,
// and the JSON the host writes for it is byte for byte the JSON the guest
// writes for the result; a result that does not fit gets no frame.
func TestResultFrameMatchesJSON(t *testing.T) {
	tests := []struct {
		name string
		r    *Result
		fits bool
	}{
		{"text", TextResult("hello"), true},
		{"escapes", TextResult("a\"b\\c\n\r\t\x01 <&> \u2028\u2029 é"), true},
		{"invalid UTF-8", TextResult("a\xffb\xc3"), true},
		{"empty text", TextResult(""), true},
		{"error", Error("no luck"), true},
		{"no content", &Result{Content: []abi.Content{}}, true},
		{"blocks", &Result{Content: []abi.Content{{Type: abi.ContentText, Text: "a"}, {Type: abi.ContentText, Text: "b"}}, IsError: true}, true},
		{"structured", &Result{Content: []abi.Content{{Type: abi.ContentText, Text: `{"n":1}`}}, StructuredContent: json.RawMessage(`{"n": 1}`)}, true},
		{"text block's other fields", &Result{Content: []abi.Content{{Type: abi.ContentText, Text: "t", MimeType: "text/plain"}}}, true},
		{"_meta", &Result{Content: []abi.Content{}, Meta: json.RawMessage(`{"a":1}`)}, false},
		{"block _meta", &Result{Content: []abi.Content{{Type: abi.ContentText, Text: "t", Meta: json.RawMessage(`{}`)}}}, false},
		{"annotations", &Result{Content: []abi.Content{{Type: abi.ContentText, Text: "t", Annotations: &abi.Annotations{Audience: []string{"user"}}}}}, false},
		{"image", &Result{Content: []abi.Content{{Type: abi.ContentImage, Data: "AAAA", MimeType: "image/png"}}}, false},
		{"invalid structured", &Result{Content: []abi.Content{}, StructuredContent: json.RawMessage(`{`)}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, wantErr := appendCallToolResult(nil, tc.r)
			frame, ok := abi.AppendResultFrame([]byte("x"), tc.r)
			if ok != tc.fits {
				t.Fatalf("fits a frame: %v; want %v", ok, tc.fits)
			}
			if !ok {
				if string(frame) != "x" {
					t.Errorf("appended %q to dst; want nothing", frame[1:])
				}
				return
			}
			if wantErr != nil {
				t.Fatalf("the guest's JSON: %v", wantErr)
			}
			if n := abi.ResultFrameSize(tc.r); n != len(frame)-1 {
				t.Errorf("ResultFrameSize = %d; the frame has %d bytes", n, len(frame)-1)
			}
			got, isError, structured, err := abi.AppendResultJSON(nil, frame[1:], 0)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("host's JSON %s, %v\nguest's     %s", got, err, want)
			}
			if isError != tc.r.IsError || !bytes.Equal(structured, tc.r.StructuredContent) {
				t.Errorf("isError %v, structured %s; want %v, %s", isError, structured, tc.r.IsError, tc.r.StructuredContent)
			}
		})
	}
}
