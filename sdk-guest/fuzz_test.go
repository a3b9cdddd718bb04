package guest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"unicode/utf8"

	"github.com/mcphost/mcphost/abi"
)

// FuzzDispatch feeds arbitrary bytes to every export of a plugin with one
// of everything: Dispatch must never panic and must return either valid
// JSON or an error.
func FuzzDispatch(f *testing.F) {
	seeds := []struct{ export, input string }{
		{abi.ExportCallTool, `{"request":{"name":"greet","arguments":{"name":"x"}},"context":{"id":1}}`},
		{abi.ExportCallTool, `{"request":{"name":"raw","arguments":[1,2]},"context":{"_meta":{"progressToken":1}}}`},
		{abi.ExportCallTool, `{"request":{"name":"boom"}}`},
		{abi.ExportListTools, `{"context":{}}`},
		{abi.ExportReadResource, `{"request":{"uri":"test://files/a/b"}}`},
		{abi.ExportReadResource, `{"request":{"uri":"test://item/%41/data"}}`},
		{abi.ExportGetPrompt, `{"request":{"name":"p","arguments":{"a":"1"}}}`},
		{abi.ExportComplete, `{"request":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"lang","value":"g"}}}`},
		{abi.ExportOnRootsListChanged, ``},
		{"bogus", `{`},
	}
	for _, s := range seeds {
		f.Add(s.export, []byte(s.input))
	}
	f.Fuzz(func(t *testing.T, export string, input []byte) {
		useRegistry(t)
		registerTools()
		AddResourceTemplate(abi.ResourceTemplate{URITemplate: "test://item/{id}/data", Name: "item"},
			func(ctx *Context, uri string, vars map[string]string) (*abi.ReadResourceResult, error) {
				return TextResource(uri, "", vars["id"]), nil
			})
		AddResourceTemplate(abi.ResourceTemplate{URITemplate: "test://files/{+path}", Name: "files"},
			func(ctx *Context, uri string, vars map[string]string) (*abi.ReadResourceResult, error) {
				return TextResource(uri, "", vars["path"]), nil
			})
		AddPrompt(abi.Prompt{Name: "p", Arguments: []abi.PromptArgument{{Name: "a", Required: true}}},
			func(ctx *Context, args map[string]string) (*abi.GetPromptResult, error) {
				return &abi.GetPromptResult{Messages: []abi.PromptMessage{UserMessage(Text(args["a"]))}}, nil
			})
		CompletePromptArg("p", "lang", func(ctx *Context, v string, _ map[string]string) ([]string, error) {
			return FilterPrefix([]string{"go", "rust"}, v), nil
		})
		out, err := Dispatch(export, input)
		if err != nil {
			return
		}
		if export == abi.ExportCallTool && string(out) == "{not json" {
			return // the junk tool's documented raw output
		}
		if !json.Valid(out) {
			t.Errorf("Dispatch(%q, %q) = %q: not valid JSON", export, input, out)
		}
	})
}

// FuzzMatchTemplate checks the matcher on arbitrary URIs: no panics, and
// a match's variables expand back to a URI that matches again.
func FuzzMatchTemplate(f *testing.F) {
	for _, s := range []string{"test://a/1/b/x/y", "test://a//b/", "test://a/%zz/b/c", "test://a/1/b/"} {
		f.Add(s)
	}
	tmpl, err := parseURITemplate("test://a/{id}/b/{+rest}")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, uri string) {
		vars, ok := tmpl.match(uri)
		if !ok {
			return
		}
		if vars["id"] == "" || vars["rest"] == "" {
			t.Errorf("match(%q) = %v: empty variable", uri, vars)
		}
	})
}

// FuzzDecodeArgs checks that the flat decoder of typed arguments gives
// encoding/json's result, or leaves the input to encoding/json.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{
		`{"text":"hi","name":"x","Plain":"p","mode":"m","-":"d","Skip":"s"}`,
		`{"text":"a\nb\u00e9\ud83d\ude00\ud800\"\\\/","text":null}`,
		`{"TEXT":"x","te\u0078t":"y"}`,
		"{\"\u212aey\":1,\"text\":\"\xff\"}",
		`{"i8":-128,"i16":32767,"u8":255,"u16":65535,"u32":4294967295,"i64":-9223372036854775808,"u64":18446744073709551615}`,
		`{"i8":128,"u":-1,"i":1.5,"i32":1e2}`,
		`{"f32":3.4e38,"f64":-1.5e-300,"b":true,"s":"x","i":-0,"u":0}`,
		`{"f32":1e39,"f64":1e400,"b":1,"s":2}`,
		`{"x":[1,{"s":"no"}],"s":"a","b":false,"b":null}`,
		`{"s":"a"} x`,
		`[]`,
		`null`,
	} {
		f.Add([]byte(s))
	}
	strs, mixed := flatPlanOf(reflect.TypeFor[flatStrings]()), flatPlanOf(reflect.TypeFor[flatMixed]())
	f.Fuzz(func(t *testing.T, in []byte) {
		compareFlat[flatStrings](t, strs, in)
		compareFlat[flatMixed](t, mixed, in)
	})
}

// FuzzCallFrame checks that a tool call through the frame export answers
// as the same call through call_tool's envelope, for any arguments the
// host would pass (valid JSON, with the index of its members; empty for
// none), with flat, typed and raw tools, that the index holds the
// members the guest's own scan would find, and that no frame makes it
// panic.
func FuzzCallFrame(f *testing.F) {
	for _, s := range []struct{ tool, args string }{
		{"greet", `{"name":"x"}`}, {"greet", `{"NAME":"x","name":null}`}, {"sum", `{"a":1,"b":2.5}`},
		{"sum", `{"a":"1"}`}, {"raw", `[1, 2]`}, {"ctx", ``}, {"boom", `{}`}, {"junk", `{}`}, {"none", `{}`},
	} {
		f.Add(s.tool, []byte(s.args))
	}
	f.Fuzz(func(t *testing.T, tool string, args []byte) {
		useRegistry(t)
		registerTools()
		_, _ = CallFrame(append([]byte(tool), args...))                                    // arbitrary bytes: it must not panic
		_, _ = CallFrame(frameIndexed("greet", string(args), abi.Context{}, []byte(tool))) // nor an arbitrary index
		if len(bytes.TrimSpace(args)) == 0 {
			args = nil
		} else if !json.Valid(args) {
			return
		}
		if len(args) > 0 {
			// The host's index holds what the guest's own scan finds.
			var scanned, indexed Context
			scanned.scanArgs(args)
			ok := indexed.indexedArgs(args, abi.AppendArgMembers(nil, args))
			if ok != scanned.membersSet || !slices.Equal(indexed.members, scanned.members) {
				t.Errorf("%s: indexed %v %+v; scanned %v %+v", args, ok, indexed.members, scanned.membersSet, scanned.members)
			}
		}
		if !utf8.ValidString(tool) {
			return // names come from the guest's list; JSON would replace bad bytes
		}
		name, err := json.Marshal(tool)
		if err != nil {
			return
		}
		cc := abi.Context{ID: json.RawMessage(`1`), Meta: json.RawMessage(`{}`), Plugin: "p"}
		env := `{"request":{"name":` + string(name)
		if args != nil {
			env += `,"arguments":` + string(args)
		}
		env += `},"context":{"id":1,"_meta":{},"plugin":"p"}}`
		want, wantErr := Dispatch(abi.ExportCallTool, []byte(env))
		got, gotErr := CallFrame(frameOf(tool, string(args), cc))
		got = asHost(got)
		if !bytes.Equal(got, want) || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("%s(%s): frame %s, %v; envelope %s, %v", tool, args, got, gotErr, want, wantErr)
		}
	})
}
