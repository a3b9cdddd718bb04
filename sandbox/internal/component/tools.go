package component

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/abi/jsonscan"
)

// Tool is an exported function seen as an MCP tool.
type Tool struct {
	Name string // the WIT name as written; with the interface's name when two interfaces share it
	Func *Func
	Def  abi.Tool
}

// Skipped is an exported function that is not a tool, and why.
type Skipped struct {
	Name, Reason string
}

// Tools maps the exported functions to tools: the name is the WIT name
// (kebab-case kept), prefixed by the interface's short name and "_" when
// two functions share it; arguments are the WIT parameter names; schemas
// come from the WIT types; descriptions from the package-docs section.
// Functions of resources (methods, constructors, statics) and functions
// taking or returning handles cannot be called with JSON and are skipped.
//
// The tools' definitions together are weighed before any schema is
// built: when they could pass Limits.ValueBytes (the plugin's output
// limit, which its tools/list answer must keep within), Tools fails with
// a *SchemaBudgetError and the component is not served. A large type
// exported under many names cannot make a large list this way.
func (cp *Compiled) Tools() ([]Tool, []Skipped, error) {
	docs := parseDocs(cp.c.docs)
	count := map[string]int{}
	for _, f := range cp.funcs {
		count[f.Name]++
	}
	var tools []Tool
	var skipped []Skipped
	budget := cp.Limits.valueBytes()
	total := int64(len(`{"tools":[]}`))
	for _, f := range cp.funcs {
		full := f.Name
		if f.Interface != "" {
			full = f.Interface + "#" + f.Name
		}
		if strings.HasPrefix(f.Name, "[") {
			skipped = append(skipped, Skipped{full, "a resource's method, constructor or static function"})
			continue
		}
		if f.Type.Result.hasResource() || slicesAny(f.Type.Params, func(p Field) bool { return p.Type.hasResource() }) {
			skipped = append(skipped, Skipped{full, "takes or returns a resource handle, which JSON cannot carry"})
			continue
		}
		nodes := 0
		if f.Type.Result != nil {
			nodes = f.Type.Result.layout.nodes
		}
		for _, p := range f.Type.Params {
			nodes += p.Type.layout.nodes
		}
		if nodes >= maxNodes {
			skipped = append(skipped, Skipped{full, fmt.Sprintf("its types written out have more than %d nodes", maxNodes)})
			continue
		}
		name := f.Name
		if count[f.Name] > 1 && f.Interface != "" {
			name = shortName(f.Interface) + "_" + f.Name
		}
		desc := docs.lookup(f)
		if desc == "" {
			// No doc comment (or no package-docs section): the WIT
			// signature says at least what the tool takes and gives.
			desc = f.Type.signature(f.Name)
		}
		if total = min(total+toolBytes(f, name, desc), maxSchema); total > budget {
			return nil, nil, &SchemaBudgetError{Limit: budget, Funcs: len(cp.funcs)}
		}
		in, _ := json.Marshal(objectSchema(f.Type.Params))
		def := abi.Tool{Name: name, Description: desc, InputSchema: in}
		if t := okType(f.Type.Result); t != nil {
			def.OutputSchema, _ = json.Marshal(wrapSchema(t))
		}
		tools = append(tools, Tool{Name: name, Func: f, Def: def})
	}
	return tools, skipped, nil
}

// toolBytes bounds the JSON of f's tool definition from above.
func toolBytes(f *Func, name, desc string) int64 {
	n := 3*int64(schemaNode) + quotedLen(name) + quotedLen(desc)
	for _, p := range f.Type.Params {
		n += 2*quotedLen(p.Name) + schemaNode + p.Type.layout.schema
	}
	if f.Type.Result != nil {
		n += f.Type.Result.layout.schema
	}
	return min(n, maxSchema)
}

// SchemaBudgetError is a component whose tools' definitions could pass
// the budget of Limits.ValueBytes.
type SchemaBudgetError struct {
	Limit int64
	Funcs int
}

func (e *SchemaBudgetError) Error() string {
	return fmt.Sprintf("the JSON Schemas of the component's %d exported functions could pass %d bytes, "+
		"the plugin's output limit, which its tool list must keep within; "+
		"export fewer functions or smaller types", e.Funcs, e.Limit)
}

// signature writes a function of this type as WIT does, without the
// func keyword: "add(a: u32, b: u32) -> u32". Types are written out
// (WIT's names for them are not in the binary).
func (ft *FuncType) signature(name string) string {
	var b strings.Builder
	b.WriteString(name + "(")
	for i, p := range ft.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.Name + ": " + p.Type.String())
	}
	b.WriteString(")")
	if ft.Result != nil {
		b.WriteString(" -> " + ft.Result.String())
	}
	return b.String()
}

func slicesAny[T any](s []T, f func(T) bool) bool {
	for _, x := range s {
		if f(x) {
			return true
		}
	}
	return false
}

// shortName is an interface's name without package and version:
// "wasi:cli/environment@0.2.0" → "environment".
func shortName(iface string) string {
	if i := strings.LastIndexByte(iface, '/'); i >= 0 {
		iface = iface[i+1:]
	}
	if i := strings.IndexByte(iface, '@'); i >= 0 {
		iface = iface[:i]
	}
	return iface
}

// okType is what a call returns when it succeeds: a result's ok payload,
// or the plain result; nil when there is none.
func okType(t *Type) *Type {
	if t != nil && t.Kind == Result {
		return t.Ok
	}
	return t
}

// wrapSchema is the output schema of a value of t: t's own when it is a
// record (an object), else {"result": t}.
func wrapSchema(t *Type) map[string]any {
	if t.Kind == Record {
		return Schema(t)
	}
	return map[string]any{"type": "object", "properties": map[string]any{"result": Schema(t)},
		"required": []string{"result"}, "additionalProperties": false}
}

// ArgumentError is a tool call whose arguments do not fit the function.
type ArgumentError struct{ Msg string }

func (e *ArgumentError) Error() string { return "invalid arguments: " + e.Msg }

// Args converts a tool call's arguments, a JSON object (empty or null for
// none), to the values of the tool's parameters, in one pass over the
// JSON: each value is checked against its WIT type as it is read.
// Arguments that do not fit are an *ArgumentError.
func (t *Tool) Args(arguments []byte) ([]any, error) {
	return argsFromJSON(t.Func.Type.Params, arguments)
}

// CallTool calls tool on inst with args (from [Tool.Args]) and returns
// the CallToolResult: a result's err comes back as isError; a guest
// failure is the error.
func (inst *Instance) CallTool(ctx context.Context, tool *Tool, args []any) ([]byte, error) {
	res, err := inst.Call(ctx, tool.Func, args)
	if err != nil {
		return nil, err
	}
	return resultJSON(tool.Func.Type.Result, res)
}

// resultJSON is the CallToolResult of a value of t, written by appending
// (encoding/json's reflection over abi.CallToolResult costs more than
// the guest's own work for a small tool).
func resultJSON(t *Type, v any) ([]byte, error) {
	if t == nil {
		return []byte(`{"content":[]}`), nil
	}
	isErr := false
	if t.Kind == Result {
		c := v.(Case)
		v = c.Val
		if c.Index == 1 {
			isErr = true
			t = t.Err
		} else {
			t = t.Ok
		}
		if t == nil {
			if isErr {
				return ErrorResult("error")
			}
			return []byte(`{"content":[]}`), nil
		}
	}
	j := ToJSON(t, v)
	text, err := textOf(j)
	if err != nil {
		return nil, err
	}
	quoted := jsonscan.AppendString(nil, text)
	out := make([]byte, 0, 2*len(quoted)+64)
	out = append(out, `{"content":[{"type":"text","text":`...)
	out = append(out, quoted...)
	out = append(out, "}]"...)
	if isErr {
		return append(out, `,"isError":true}`...), nil
	}
	out = append(out, `,"structuredContent":`...)
	if t.Kind != Record {
		out = append(out, `{"result":`...)
	}
	if _, ok := j.(string); ok {
		out = append(out, quoted...)
	} else {
		b, err := json.Marshal(j)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	if t.Kind != Record {
		out = append(out, '}')
	}
	return append(out, '}'), nil
}

func textOf(j any) (string, error) {
	if s, ok := j.(string); ok {
		return s, nil
	}
	b, err := json.Marshal(j)
	return string(b), err
}

// ErrorResult is the CallToolResult of a call that failed with msg
// (isError).
func ErrorResult(msg string) ([]byte, error) {
	return json.Marshal(abi.CallToolResult{Content: []abi.Content{{Type: "text", Text: msg}}, IsError: true})
}

// docs is the package-docs custom section: a version byte, then JSON.
type docs struct {
	Worlds     map[string]docItem `json:"worlds"`
	Interfaces map[string]docItem `json:"interfaces"`
}

type docItem struct {
	Docs        string                     `json:"docs"`
	Funcs       map[string]json.RawMessage `json:"funcs"`
	FuncExports map[string]json.RawMessage `json:"func_exports"`
}

func parseDocs(b []byte) *docs {
	d := &docs{}
	if len(b) > 1 && b[0] <= 1 {
		_ = json.Unmarshal(b[1:], d) // a section we cannot read only loses descriptions
	}
	return d
}

// lookup returns f's doc comment.
func (d *docs) lookup(f *Func) string {
	if f.Interface != "" {
		name := f.Interface
		if i := strings.IndexByte(name, '/'); i >= 0 {
			name = name[i+1:]
		}
		if i := strings.IndexByte(name, '@'); i >= 0 {
			name = name[:i]
		}
		return funcDoc(d.Interfaces[name].Funcs[f.Name])
	}
	for _, w := range d.Worlds {
		if s := funcDoc(w.FuncExports[f.Name]); s != "" {
			return s
		}
		if s := funcDoc(w.Funcs[f.Name]); s != "" {
			return s
		}
	}
	return ""
}

// funcDoc reads a FunctionMetadata: a string, or {"docs": …}.
func funcDoc(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Docs string `json:"docs"`
	}
	_ = json.Unmarshal(raw, &o)
	return o.Docs
}
