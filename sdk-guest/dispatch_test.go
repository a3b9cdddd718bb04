package guest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

type greetIn struct {
	Name  string `json:"name" jsonschema:"who to greet"`
	Times int    `json:"times,omitempty"`
}

type sumOut struct {
	Sum int `json:"sum"`
}

const rawSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"}},"additionalProperties":false}`

func registerTools() {
	AddTool(Tool{Name: "greet", Title: "Greet", Description: "Greets someone."},
		func(ctx *Context, in greetIn) (*Result, error) {
			return TextResult(strings.Repeat("hello "+in.Name+" ", max(in.Times, 1))), nil
		})
	AddTool(Tool{Name: "fail", Description: "Always fails."},
		func(ctx *Context, in struct{}) (*Result, error) { return nil, errors.New("it failed") })
	AddTool(Tool{Name: "boom", Description: "Panics."},
		func(ctx *Context, in struct{}) (*Result, error) {
			var m map[string]int
			m["x"] = 1 // assignment to entry in nil map
			return nil, nil
		})
	AddTool(Tool{Name: "nothing", Description: "Returns nil."},
		func(ctx *Context, in struct{}) (*Result, error) { return nil, nil })
	AddToolOut(Tool{Name: "sum", Description: "Adds."},
		func(ctx *Context, in struct {
			A int `json:"a"`
			B int `json:"b"`
		}) (sumOut, error) {
			return sumOut{in.A + in.B}, nil
		})
	AddToolRaw(abi.Tool{Name: "raw", Description: "Raw.", InputSchema: json.RawMessage(rawSchema)},
		func(ctx *Context, args json.RawMessage) (*abi.CallToolResult, error) {
			if args == nil {
				return TextResult("no arguments"), nil
			}
			return TextResult("args " + string(args)), nil
		})
	AddTool(Tool{Name: "ctx", Description: "Shows its context."},
		func(ctx *Context, in struct{}) (*Result, error) {
			return TextResult(fmt.Sprintf("id=%s token=%s plugin=%s version=%s", ctx.ID, ctx.ProgressToken(), ctx.Plugin, ctx.ProtocolVersion)), nil
		})
	AddTool(Tool{Name: "junk", Description: "Bad output."},
		func(ctx *Context, in struct{}) (*Result, error) {
			ctx.WriteRawOutput([]byte("{not json"))
			return TextResult("ignored"), nil
		})
}

func TestListTools(t *testing.T) {
	useRegistry(t)
	registerTools()
	out, err := Dispatch(abi.ExportListTools, []byte(`{"context":{"id":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Tools []map[string]json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range got.Tools {
		var n string
		json.Unmarshal(tl["name"], &n)
		names = append(names, n)
	}
	if want := "greet fail boom nothing sum raw ctx junk"; strings.Join(names, " ") != want {
		t.Errorf("tools = %v; want %s", names, want)
	}
	want := map[string]string{
		"greet": `{"type":"object","properties":{"name":{"type":"string","description":"who to greet"},"times":{"type":"integer"}},"required":["name"],"additionalProperties":false}`,
		"raw":   rawSchema,
	}
	for i, n := range names {
		if w, ok := want[n]; ok && string(got.Tools[i]["inputSchema"]) != w {
			t.Errorf("%s inputSchema:\ngot  %s\nwant %s", n, got.Tools[i]["inputSchema"], w)
		}
		if n == "sum" {
			if w := `{"type":"object","properties":{"sum":{"type":"integer"}},"required":["sum"],"additionalProperties":false}`; string(got.Tools[i]["outputSchema"]) != w {
				t.Errorf("sum outputSchema = %s; want %s", got.Tools[i]["outputSchema"], w)
			}
		}
	}
}

func TestCallTool(t *testing.T) {
	useRegistry(t)
	registerTools()
	tests := []struct {
		name, args, ctx string
		want            string
	}{
		{"greet", `{"name":"ann"}`, "", `{"content":[{"type":"text","text":"hello ann "}]}`},
		{"greet", `{"name":"bo","times":2}`, "", `{"content":[{"type":"text","text":"hello bo hello bo "}]}`},
		{"greet", `{"times":2}`, "", `{"content":[{"type":"text","text":"invalid arguments: missing required argument \"name\""}],"isError":true}`},
		{"greet", ``, "", `{"content":[{"type":"text","text":"invalid arguments: missing required argument \"name\""}],"isError":true}`},
		{"greet", `{"name":""}`, "", `{"content":[{"type":"text","text":"hello  "}]}`},
		{"sum", `{"a":0,"b":0}`, "", `{"content":[{"type":"text","text":"{\"sum\":0}"}],"structuredContent":{"sum":0}}`},
		{"sum", `{"a":1}`, "", `{"content":[{"type":"text","text":"invalid arguments: missing required argument \"b\""}],"isError":true}`},
		{"greet", `{"name":3}`, "", `{"content":[{"type":"text","text":"invalid arguments: json: cannot unmarshal number into Go struct field greetIn.name of type string"}],"isError":true}`},
		{"greet", `[1]`, "", `{"content":[{"type":"text","text":"invalid arguments: json: cannot unmarshal array into Go value of type guest.greetIn"}],"isError":true}`},
		{"fail", `{}`, "", `{"content":[{"type":"text","text":"it failed"}],"isError":true}`},
		{"boom", `{}`, "", `{"content":[{"type":"text","text":"panic in tool \"boom\": assignment to entry in nil map"}],"isError":true}`},
		{"nothing", ``, "", `{"content":[]}`},
		{"sum", `{"a":2,"b":3}`, "", `{"content":[{"type":"text","text":"{\"sum\":5}"}],"structuredContent":{"sum":5}}`},
		{"raw", ``, "", `{"content":[{"type":"text","text":"no arguments"}]}`},
		{"raw", `{"name":"x","extra":[1, 2]}`, "", `{"content":[{"type":"text","text":"args {\"name\":\"x\",\"extra\":[1, 2]}"}]}`},
		{"ctx", ``, `{"id":"abc","_meta":{"progressToken":7},"plugin":"p","protocolVersion":"2025-11-25"}`,
			`{"content":[{"type":"text","text":"id=\"abc\" token=7 plugin=p version=2025-11-25"}]}`},
		{"ctx", ``, `{"id":2,"_meta":{}}`, `{"content":[{"type":"text","text":"id=2 token= plugin= version="}]}`},
		{"junk", ``, "", `{not json`},
	}
	for _, tt := range tests {
		req := `{"name":"` + tt.name + `"`
		if tt.args != "" {
			req += `,"arguments":` + tt.args
		}
		req += "}"
		ctx := tt.ctx
		if ctx == "" {
			ctx = "{}"
		}
		out, err := Dispatch(abi.ExportCallTool, []byte(`{"request":`+req+`,"context":`+ctx+`}`))
		if err != nil {
			t.Errorf("%s %s: error %v", tt.name, tt.args, err)
			continue
		}
		if string(out) != tt.want {
			t.Errorf("%s %s:\ngot  %s\nwant %s", tt.name, tt.args, out, tt.want)
		}
	}
}

func TestDispatchErrors(t *testing.T) {
	useRegistry(t)
	registerTools()
	tests := []struct {
		export, input, want string
	}{
		{"nope", `{}`, `unknown export "nope"`},
		{abi.ExportCallTool, `{"request":`, "call_tool: invalid input JSON"},
		{abi.ExportCallTool, `[]`, "call_tool: invalid input JSON"},
		{abi.ExportCallTool, `{"context":{}}`, "call_tool: input has no request"},
		{abi.ExportCallTool, `{"request":{"name":"missing"}}`, `call_tool: unknown tool "missing"`},
		{abi.ExportCallTool, `{"request":{"name":7}}`, "call_tool: invalid request"},
		{abi.ExportReadResource, `{"request":{"uri":""}}`, "read_resource: request has no uri"},
		{abi.ExportGetPrompt, `{"request":{"name":"x"}}`, `get_prompt: unknown prompt "x"`},
		{abi.ExportComplete, `{"request":{"ref":{"type":"ref/tool","name":"x"},"argument":{"name":"a","value":""}}}`, `complete: unknown reference type "ref/tool"`},
	}
	for _, tt := range tests {
		out, err := Dispatch(tt.export, []byte(tt.input))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Dispatch(%s, %s) = %s, %v; want error containing %q", tt.export, tt.input, out, err, tt.want)
		}
	}
}

func TestEmptyRegistry(t *testing.T) {
	useRegistry(t)
	tests := []struct{ export, want string }{
		{abi.ExportListTools, `{"tools":[]}`},
		{abi.ExportListResources, `{"resources":[]}`},
		{abi.ExportListResourceTemplates, `{"resourceTemplates":[]}`},
		{abi.ExportListPrompts, `{"prompts":[]}`},
		{abi.ExportOnRootsListChanged, `{}`},
	}
	for _, tt := range tests {
		for _, in := range []string{"", `{"context":{}}`} {
			out, err := Dispatch(tt.export, []byte(in))
			if err != nil || string(out) != tt.want {
				t.Errorf("Dispatch(%s, %q) = %s, %v; want %s", tt.export, in, out, err, tt.want)
			}
		}
	}
}

func TestResources(t *testing.T) {
	useRegistry(t)
	AddResource(abi.Resource{URI: "test://static", Name: "static", MimeType: "text/plain"},
		func(ctx *Context, uri string) (*abi.ReadResourceResult, error) {
			return TextResource(uri, "text/plain", "static text"), nil
		})
	AddResource(abi.Resource{URI: "test://broken", Name: "broken"},
		func(ctx *Context, uri string) (*abi.ReadResourceResult, error) {
			return nil, errors.New("disk on fire")
		})
	AddResource(abi.Resource{URI: "test://panics", Name: "panics"},
		func(ctx *Context, uri string) (*abi.ReadResourceResult, error) { panic("resource boom") })
	AddResourceTemplate(abi.ResourceTemplate{URITemplate: "test://item/{id}/data", Name: "item"},
		func(ctx *Context, uri string, vars map[string]string) (*abi.ReadResourceResult, error) {
			return BlobResource(uri, "application/octet-stream", []byte(vars["id"])), nil
		})
	AddResourceTemplate(abi.ResourceTemplate{URITemplate: "test://files/{+path}", Name: "files"},
		func(ctx *Context, uri string, vars map[string]string) (*abi.ReadResourceResult, error) {
			if vars["path"] == "missing" {
				return nil, fmt.Errorf("no such file: %w", ErrNotFound)
			}
			return TextResource(uri, "", "path="+vars["path"]), nil
		})
	AddResourceLister(func(ctx *Context) ([]abi.Resource, error) {
		return []abi.Resource{{URI: "test://files/a/b.txt", Name: "b.txt"}}, nil
	})

	out, err := Dispatch(abi.ExportListResources, nil)
	if want := `{"resources":[{"uri":"test://static","name":"static","mimeType":"text/plain"},{"uri":"test://broken","name":"broken"},{"uri":"test://panics","name":"panics"},{"uri":"test://files/a/b.txt","name":"b.txt"}]}`; err != nil || string(out) != want {
		t.Errorf("list_resources = %s, %v; want %s", out, err, want)
	}
	out, err = Dispatch(abi.ExportListResourceTemplates, nil)
	if want := `{"resourceTemplates":[{"uriTemplate":"test://item/{id}/data","name":"item"},{"uriTemplate":"test://files/{+path}","name":"files"}]}`; err != nil || string(out) != want {
		t.Errorf("list_resource_templates = %s, %v; want %s", out, err, want)
	}

	reads := []struct {
		uri, want, wantErr string
	}{
		{"test://static", `{"contents":[{"uri":"test://static","mimeType":"text/plain","text":"static text"}]}`, ""},
		{"test://item/42/data", `{"contents":[{"uri":"test://item/42/data","mimeType":"application/octet-stream","blob":"NDI="}]}`, ""},
		{"test://item/a%20b/data", `{"contents":[{"uri":"test://item/a%20b/data","mimeType":"application/octet-stream","blob":"YSBi"}]}`, ""},
		{"test://files/a/b.txt", `{"contents":[{"uri":"test://files/a/b.txt","text":"path=a/b.txt"}]}`, ""},
		{"test://item/4/2/data", "", "resource not found: test://item/4/2/data"},
		{"test://other", "", "resource not found: test://other"},
		{"test://files/missing", "", "read test://files/missing: no such file: resource not found"},
		{"test://broken", "", "read test://broken: disk on fire"},
		{"test://panics", "", "read_resource: panic: resource boom"},
	}
	for _, tt := range reads {
		out, err := Dispatch(abi.ExportReadResource, input(t, abi.ReadResourceParams{URI: tt.uri}, ""))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("read %s = %s, %v; want error containing %q", tt.uri, out, err, tt.wantErr)
			}
			if strings.Contains(tt.wantErr, "not found") && !errors.Is(err, ErrNotFound) {
				t.Errorf("read %s: errors.Is(%v, ErrNotFound) = false; want true", tt.uri, err)
			}
			continue
		}
		if err != nil || string(out) != tt.want {
			t.Errorf("read %s = %s, %v; want %s", tt.uri, out, err, tt.want)
		}
	}
	if !RemoveResource("test://broken") || RemoveResource("test://broken") {
		t.Errorf("RemoveResource: want true then false")
	}
}

func TestPrompts(t *testing.T) {
	useRegistry(t)
	AddPrompt(abi.Prompt{Name: "p", Description: "d", Arguments: []abi.PromptArgument{{Name: "a", Required: true}, {Name: "b"}}},
		func(ctx *Context, args map[string]string) (*abi.GetPromptResult, error) {
			return &abi.GetPromptResult{Messages: []abi.PromptMessage{
				UserMessage(Text("a=" + args["a"] + " b=" + args["b"])),
				AssistantMessage(ImageBase64("AAAA", "image/png")),
			}}, nil
		})
	AddPrompt(abi.Prompt{Name: "empty", Description: "d"},
		func(ctx *Context, args map[string]string) (*abi.GetPromptResult, error) { return nil, nil })
	AddPrompt(abi.Prompt{Name: "bad", Description: "d"},
		func(ctx *Context, args map[string]string) (*abi.GetPromptResult, error) {
			return nil, errors.New("nope")
		})

	out, err := Dispatch(abi.ExportListPrompts, nil)
	if want := `{"prompts":[{"name":"p","description":"d","arguments":[{"name":"a","required":true},{"name":"b"}]},{"name":"empty","description":"d"},{"name":"bad","description":"d"}]}`; err != nil || string(out) != want {
		t.Errorf("list_prompts = %s, %v; want %s", out, err, want)
	}
	tests := []struct {
		name    string
		args    map[string]string
		want    string
		wantErr string
	}{
		{"p", map[string]string{"a": "1"}, `{"messages":[{"role":"user","content":{"type":"text","text":"a=1 b="}},{"role":"assistant","content":{"type":"image","data":"AAAA","mimeType":"image/png"}}]}`, ""},
		{"p", nil, "", `prompt "p": missing required argument "a"`},
		{"empty", nil, `{"messages":[]}`, ""},
		{"bad", nil, "", `get_prompt: prompt "bad": nope`},
	}
	for _, tt := range tests {
		out, err := Dispatch(abi.ExportGetPrompt, input(t, abi.GetPromptParams{Name: tt.name, Arguments: tt.args}, ""))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("get_prompt %s = %s, %v; want error %q", tt.name, out, err, tt.wantErr)
			}
			continue
		}
		if err != nil || string(out) != tt.want {
			t.Errorf("get_prompt %s = %s, %v; want %s", tt.name, out, err, tt.want)
		}
	}
	if !RemovePrompt("bad") || len(std.listPrompts().Prompts) != 2 {
		t.Errorf("RemovePrompt(bad): want it gone")
	}
}

func TestComplete(t *testing.T) {
	useRegistry(t)
	AddPrompt(abi.Prompt{Name: "p", Description: "d"}, func(*Context, map[string]string) (*abi.GetPromptResult, error) { return nil, nil })
	AddPrompt(abi.Prompt{Name: "plain", Description: "d"}, func(*Context, map[string]string) (*abi.GetPromptResult, error) { return nil, nil })
	AddResourceTemplate(abi.ResourceTemplate{URITemplate: "x://{id}", Name: "x"},
		func(*Context, string, map[string]string) (*abi.ReadResourceResult, error) { return nil, nil })
	CompletePromptArg("p", "lang", func(ctx *Context, value string, args map[string]string) ([]string, error) {
		return FilterPrefix([]string{"go", "Gleam", "rust", "python"}, value), nil
	})
	CompletePromptArg("p", "many", func(ctx *Context, value string, args map[string]string) ([]string, error) {
		var v []string
		for i := range 150 {
			v = append(v, fmt.Sprint(i))
		}
		return v, nil
	})
	CompletePromptArg("p", "ctx", func(ctx *Context, value string, args map[string]string) ([]string, error) {
		return []string{args["lang"] + "/" + value}, nil
	})
	CompleteTemplateVar("x://{id}", "id", func(ctx *Context, value string, args map[string]string) ([]string, error) {
		return []string{value + "1", value + "2"}, nil
	})
	tests := []struct {
		req     string
		want    string
		wantErr string
	}{
		{`{"ref":{"type":"prompt","name":"p"},"argument":{"name":"lang","value":"g"}}`, `{"completion":{"values":["go","Gleam"],"total":2}}`, ""},
		{`{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"lang","value":"zzz"}}`, `{"completion":{"values":[],"total":0}}`, ""},
		{`{"ref":{"type":"prompt","name":"p"},"argument":{"name":"ctx","value":"v"},"context":{"arguments":{"lang":"go"}}}`, `{"completion":{"values":["go/v"],"total":1}}`, ""},
		{`{"ref":{"type":"prompt","name":"plain"},"argument":{"name":"a","value":""}}`, `{"completion":{"values":[],"total":0}}`, ""},
		{`{"ref":{"type":"resource","uri":"x://{id}"},"argument":{"name":"id","value":"n"}}`, `{"completion":{"values":["n1","n2"],"total":2}}`, ""},
		{`{"ref":{"type":"prompt","name":"nope"},"argument":{"name":"a","value":""}}`, "", `unknown prompt "nope"`},
		{`{"ref":{"type":"resource","uri":"y://"},"argument":{"name":"a","value":""}}`, "", `unknown resource "y://"`},
	}
	for _, tt := range tests {
		out, err := Dispatch(abi.ExportComplete, []byte(`{"request":`+tt.req+`}`))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("complete %s = %s, %v; want error %q", tt.req, out, err, tt.wantErr)
			}
			continue
		}
		if err != nil || string(out) != tt.want {
			t.Errorf("complete %s = %s, %v; want %s", tt.req, out, err, tt.want)
		}
	}
	out, err := Dispatch(abi.ExportComplete, []byte(`{"request":{"ref":{"type":"prompt","name":"p"},"argument":{"name":"many","value":""}}}`))
	var res abi.CompleteResult
	if err != nil || json.Unmarshal(out, &res) != nil || len(res.Completion.Values) != 100 || !res.Completion.HasMore || *res.Completion.Total != 150 {
		t.Errorf("complete many = %.120s, %v; want 100 values, hasMore, total 150", out, err)
	}
	SetCompleter(func(ctx *Context, p abi.CompleteParams) (*abi.Completion, error) {
		return &abi.Completion{Values: []string{"fallback:" + p.Argument.Name}}, nil
	})
	out, err = Dispatch(abi.ExportComplete, []byte(`{"request":{"ref":{"type":"prompt","name":"nope"},"argument":{"name":"a","value":""}}}`))
	if want := `{"completion":{"values":["fallback:a"]}}`; err != nil || string(out) != want {
		t.Errorf("complete with fallback = %s, %v; want %s", out, err, want)
	}
}

func TestRootsListChanged(t *testing.T) {
	h := useRegistry(t)
	h.replies[abi.HostListRoots] = `{"roots":[{"uri":"file:///a","name":"a"}]}`
	var got []abi.Root
	OnRootsListChanged(func(ctx *Context) {
		got, _ = ctx.Roots()
	})
	if _, err := Dispatch(abi.ExportOnRootsListChanged, []byte(`{"context":{}}`)); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].URI != "file:///a" {
		t.Errorf("roots = %+v; want [file:///a]", got)
	}
}

func TestUnrecovered(t *testing.T) {
	useRegistry(t)
	AddTool(Tool{Name: "trap", Description: "Traps."}, func(ctx *Context, in struct{}) (*Result, error) {
		Unrecovered(func() { panic("really dead") })
		return nil, nil
	})
	defer func() {
		if p := recover(); p != "really dead" {
			t.Errorf("recovered %v; want the original panic value \"really dead\"", p)
		}
	}()
	Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"trap"}}`))
	t.Errorf("Dispatch returned; want the panic to escape")
}

func TestRegistration(t *testing.T) {
	useRegistry(t)
	AddTool(Tool{Name: "t", Description: "one"}, func(*Context, struct{}) (*Result, error) { return TextResult("1"), nil })
	AddTool(Tool{Name: "t", Description: "two"}, func(*Context, struct{}) (*Result, error) { return TextResult("2"), nil })
	if l := std.listTools().Tools; len(l) != 1 || l[0].Description != "two" {
		t.Errorf("re-registering: tools %+v; want one tool, the second", l)
	}
	if !RemoveTool("t") || RemoveTool("t") || len(std.listTools().Tools) != 0 {
		t.Errorf("RemoveTool: want true, then false, and no tools")
	}
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: no panic; want one", name)
			}
		}()
		f()
	}
	mustPanic("bad name", func() {
		AddTool(Tool{Name: "a b"}, func(*Context, struct{}) (*Result, error) { return nil, nil })
	})
	mustPanic("bad input type", func() {
		AddTool(Tool{Name: "x"}, func(*Context, string) (*Result, error) { return nil, nil })
	})
	mustPanic("bad output type", func() {
		AddToolOut(Tool{Name: "x"}, func(*Context, struct{}) ([]int, error) { return nil, nil })
	})
	mustPanic("bad template", func() {
		AddResourceTemplate(abi.ResourceTemplate{URITemplate: "x://{?q}", Name: "q"}, nil)
	})
	mustPanic("resource without name", func() { AddResource(abi.Resource{URI: "x://"}, nil) })
	mustPanic("prompt without name", func() { AddPrompt(abi.Prompt{}, nil) })
}

func TestRequiredEmbedded(t *testing.T) {
	useRegistry(t)
	type in struct {
		*Embedded
		N int `json:"n"`
	}
	AddTool(Tool{Name: "emb", Description: "Embedded."}, func(ctx *Context, v in) (*Result, error) {
		return TextResult(fmt.Sprintf("%s/%d", v.ID, v.N)), nil
	})
	tests := []struct{ args, want string }{
		{`{"id":"a","n":2}`, "a/2"},
		{`{"id":"","n":0}`, "/0"},
		{`{"n":1}`, `invalid arguments: missing required argument "id"`},
		{`{"id":"a"}`, `invalid arguments: missing required argument "n"`},
	}
	for _, tt := range tests {
		out, err := Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"emb","arguments":`+tt.args+`}}`))
		var res abi.CallToolResult
		if err != nil || json.Unmarshal(out, &res) != nil || res.Content[0].Text != tt.want {
			t.Errorf("emb %s = %s, %v; want %q", tt.args, out, err, tt.want)
		}
	}
}

// Embedded is exported because encoding/json cannot fill an embedded
// pointer to an unexported struct.
type Embedded struct {
	ID string `json:"id"`
}

// TestTaskSupport: a tool's TaskSupport is listed as execution.taskSupport;
// none is listed without it.
func TestTaskSupport(t *testing.T) {
	useRegistry(t)
	h := func(*Context, struct{}) (*Result, error) { return TextResult("ok"), nil }
	AddTool(Tool{Name: "long", TaskSupport: abi.TaskOptional}, h)
	AddTool(Tool{Name: "short"}, h)
	out, err := Dispatch(abi.ExportListTools, []byte(`{"context":{"id":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"name":"long","inputSchema":{"type":"object","properties":{},"additionalProperties":false},"execution":{"taskSupport":"optional"}}`, `"name":"short","inputSchema":{"type":"object","properties":{},"additionalProperties":false}}`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("list_tools = %s; want it to contain %s", out, want)
		}
	}
}
