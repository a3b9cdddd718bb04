package guest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unsafe"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/abi/jsonscan"
)

// AddTool registers a tool whose arguments decode into In. The input
// schema is derived from In (see [SchemaFor]) unless tool.InputSchema is
// set. A handler's error becomes a result with isError set and the error's
// text, so the model can see it and correct itself; so do arguments that do
// not decode into In or lack a required member. A panic in the handler is
// recovered and reported the same way.
//
// Registering a name again replaces the earlier tool. AddTool panics when
// the name is invalid or In has no JSON Schema: both are programming errors
// that show up on the first load.
func AddTool[In any](tool Tool, h func(*Context, In) (*Result, error)) {
	def := toolDef(tool, reflect.TypeFor[In](), nil)
	args, flat := typedArgs[In](def)
	std.addTool(&toolEntry{
		def: def, decodes: true, flat: flat,
		handler: func(ctx *Context, raw json.RawMessage) (*Result, error) {
			in, bad := args(ctx, raw)
			if bad != nil {
				return bad, nil
			}
			return h(ctx, in)
		},
	})
}

// AddToolOut registers a tool with typed input and output. The output
// schema is derived from Out, which must be a struct or a map with string
// keys (MCP requires an object); the result carries Out as
// structuredContent and, for clients that predate structured content, the
// same JSON as a text block.
func AddToolOut[In, Out any](tool Tool, h func(*Context, In) (Out, error)) {
	def := toolDef(tool, reflect.TypeFor[In](), reflect.TypeFor[Out]())
	args, flat := typedArgs[In](def)
	std.addTool(&toolEntry{
		def: def, decodes: true, flat: flat,
		handler: func(ctx *Context, raw json.RawMessage) (*Result, error) {
			in, bad := args(ctx, raw)
			if bad != nil {
				return bad, nil
			}
			out, err := h(ctx, in)
			if err != nil {
				return nil, err
			}
			return JSON(out)
		},
	})
}

// AddToolRaw registers a tool exactly as described: its schemas, _meta and
// every other member are passed through verbatim (an empty InputSchema
// becomes {"type":"object"}). The handler gets the arguments as sent, or
// nil when the client sent none.
func AddToolRaw(tool abi.Tool, h func(*Context, json.RawMessage) (*abi.CallToolResult, error)) {
	if len(bytes.TrimSpace(tool.InputSchema)) == 0 {
		tool.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	std.addTool(&toolEntry{def: tool, handler: h})
}

func toolDef(tool Tool, in, out reflect.Type) abi.Tool {
	def := abi.Tool{
		Name: tool.Name, Title: tool.Title, Description: tool.Description, Icons: tool.Icons,
		Annotations: tool.Annotations, Meta: tool.Meta,
		InputSchema: tool.InputSchema, OutputSchema: tool.OutputSchema,
	}
	if tool.TaskSupport != "" {
		def.Execution = &abi.ToolExecution{TaskSupport: tool.TaskSupport}
	}
	if tool.UI != nil {
		def = appDef(tool, def) // app.go
	}
	if len(def.InputSchema) == 0 {
		s, err := schemaOf(in)
		if err != nil {
			panic(fmt.Sprintf("guest: tool %q: input %v", tool.Name, err))
		}
		def.InputSchema = s
	}
	if out != nil && len(def.OutputSchema) == 0 {
		s, err := schemaOf(out)
		if err != nil {
			panic(fmt.Sprintf("guest: tool %q: output %v", tool.Name, err))
		}
		def.OutputSchema = s
	}
	return def
}

// typedArgs returns the decoder of a typed tool's arguments: the value, or
// the isError result that says what is wrong with them. When In has a
// flat plan that covers its required arguments, the plan's decoding also
// tells which are present, so a call neither reflects nor parses again.
// flat says In has a flat plan: the top-level members of the arguments
// are all the decoder needs of a call's scan.
func typedArgs[In any](def abi.Tool) (decode func(*Context, json.RawMessage) (In, *Result), flat bool) {
	names := requiredOf(def.InputSchema)
	required := requiredCheck[In](names)
	plan := flatPlanOf(reflect.TypeFor[In]())
	var reqIdx []int
	planned := plan != nil
	if planned {
		reqIdx, planned = plan.requiredFields(names)
	}
	return func(ctx *Context, raw json.RawMessage) (In, *Result) {
		in, seen, took, err := decodeArgs[In](ctx, plan, raw)
		if err != nil {
			return in, Error(err.Error())
		}
		if took && planned {
			for n, i := range reqIdx {
				if seen&(1<<i) == 0 {
					return in, Errorf("invalid arguments: missing required argument %q", names[n])
				}
			}
			return in, nil
		}
		// A method, not a closure: through a func value &in would escape
		// and In be allocated on every call.
		if name, ok := required.missing(reflect.ValueOf(&in).Elem(), raw); ok {
			return in, Errorf("invalid arguments: missing required argument %q", name)
		}
		return in, nil
	}, plan != nil
}

// decodeArgs decodes a tool's arguments; missing or null arguments give
// In's zero value. plan, when set, is In's flat plan, tried before
// encoding/json on the members the scan of the call's input recorded for
// ctx; took says it decoded them, and seen then has bit i set for each
// of its fields i present in args.
func decodeArgs[In any](ctx *Context, plan *flatPlan, args json.RawMessage) (in In, seen uint64, took bool, err error) {
	if plan != nil {
		if ms, ok := ctx.argMembers(args); ok {
			if seen, ok := plan.decodeMembers(args, ms, unsafe.Pointer(&in)); ok {
				return in, seen, true, nil
			}
		}
	}
	known := ctx.bigArgs(args)
	if t := bytes.TrimSpace(args); len(t) != len(args) {
		args, known = t, nil // known's offsets are args' own
	}
	if len(args) == 0 || string(args) == "null" {
		var zero In
		return zero, 0, false, nil
	}
	in, err = decodeArgsSlow[In](known, args)
	return in, 0, false, err
}

// decodeArgsSlow decodes args, neither empty nor null, with encoding/json.
// It is apart from decodeArgs so that only its In is allocated on the
// heap, where encoding/json's reflection puts it.
func decodeArgsSlow[In any](known *[]jsonscan.String, args json.RawMessage) (In, error) {
	var in In
	if done, err := decodeBig(args, &in, known); done {
		if err != nil {
			return in, fmt.Errorf("invalid arguments: %v", err)
		}
		return in, nil
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return in, fmt.Errorf("invalid arguments: %v", err)
	}
	return in, nil
}

// requiredArgs finds the required arguments absent from a call's.
type requiredArgs struct {
	names []string
	index map[string][]int // of In's fields, when In is a struct
}

// requiredCheck returns the check of In's required arguments.
func requiredCheck[In any](required []string) requiredArgs {
	r := requiredArgs{names: required}
	if t := reflect.TypeFor[In](); len(required) > 0 && t.Kind() == reflect.Struct {
		r.index = fieldIndex(t)
	}
	return r
}

// missing reports the first required argument absent from args, which
// decoded into in. A present argument never decodes to a zero value
// unless it was sent as one, so args is parsed again only when a required
// field of the decoded value is zero.
func (r requiredArgs) missing(in reflect.Value, args json.RawMessage) (string, bool) {
	if len(r.names) == 0 {
		return "", false
	}
	if r.index == nil {
		return missingRequired(r.names, args)
	}
	for _, name := range r.names {
		idx, ok := r.index[name]
		if !ok {
			return missingRequired(r.names, args)
		}
		f, err := in.FieldByIndexErr(idx)
		if err != nil || f.IsZero() {
			return missingRequired(r.names, args)
		}
	}
	return "", false
}

// fieldIndex maps the JSON names of t's fields to their indexes, with the
// naming rules of the schema deriver.
func fieldIndex(t reflect.Type) map[string][]int {
	out := map[string][]int{}
	var walk func(t reflect.Type, prefix []int)
	walk = func(t reflect.Type, prefix []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			idx := append(append([]int(nil), prefix...), i)
			if f.Anonymous && name == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft, idx)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if _, taken := out[name]; !taken {
				out[name] = idx
			}
		}
	}
	walk(t, nil)
	return out
}

// missingRequired returns the first required argument absent from args.
func missingRequired(required []string, args json.RawMessage) (string, bool) {
	if len(required) == 0 {
		return "", false
	}
	var m map[string]json.RawMessage
	if t := bytes.TrimSpace(args); len(t) > 0 && string(t) != "null" && json.Unmarshal(t, &m) != nil {
		return "", false // not an object: decoding the arguments reports it
	}
	for _, name := range required {
		if _, ok := m[name]; !ok {
			return name, true
		}
	}
	return "", false
}
