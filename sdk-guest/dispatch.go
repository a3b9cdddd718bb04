package guest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/abi"
)

// maxCompletions is the most values a completion may carry (MCP says 100).
const maxCompletions = 100

// Dispatch runs one export of the v2 ABI on input (the JSON envelope of
// package abi) and returns the export's JSON output. It is exactly what
// the Wasm exports run, so tests can drive a plugin natively:
//
//	out, err := guest.Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"sha256","arguments":{"text":"abc"}},"context":{}}`))
//
// An error is what the export reports through Extism's error_set: bad
// input JSON, an unknown tool, prompt or resource, a failing resource or
// prompt handler. Tool handlers never produce one: their errors and panics
// become results with isError set.
//
// Dispatch recovers every panic except those raised through [Unrecovered].
func Dispatch(export string, input []byte) (output []byte, err error) {
	return std.dispatch(export, input)
}

// unrecovered carries a panic the SDK must not swallow.
type unrecovered struct{ value any }

// Unrecovered runs f and lets a panic in f escape the SDK's recovery, so it
// kills the Wasm instance with a trap (natively, it propagates out of
// [Dispatch]). It exists for testing hosts against crashing plugins.
func Unrecovered(f func()) {
	defer func() {
		if p := recover(); p != nil {
			panic(unrecovered{p})
		}
	}()
	f()
}

var exports = map[string]bool{
	abi.ExportListTools: true, abi.ExportCallTool: true, abi.ExportListResources: true,
	abi.ExportListResourceTemplates: true, abi.ExportReadResource: true, abi.ExportListPrompts: true,
	abi.ExportGetPrompt: true, abi.ExportComplete: true, abi.ExportOnRootsListChanged: true,
	abi.ExportListSkills: true,
}

func (r *registry) dispatch(export string, input []byte) (output []byte, err error) {
	if !exports[export] {
		return nil, fmt.Errorf("unknown export %q", export)
	}
	ctx := &Context{}
	defer recoverExport(export, &output, &err)
	res, err := r.handle(ctx, export, input)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", export, err)
	}
	if ctx.rawSet {
		return ctx.rawOutput, nil
	}
	var out []byte
	if r, ok := res.(*Result); ok {
		out, err = appendCallToolResult(make([]byte, 0, resultSize(r)), r)
	} else {
		out, err = json.Marshal(res)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: encode output: %w", export, err)
	}
	return out, nil
}

// recoverExport, deferred by an export's body, turns a panic into the
// export's error, except one raised through [Unrecovered].
func recoverExport(export string, output *[]byte, err *error) {
	if p := recover(); p != nil {
		if u, ok := p.(unrecovered); ok {
			panic(u.value)
		}
		Logf(LevelError, "panic in %s: %v", export, p)
		*output, *err = nil, fmt.Errorf("%s: panic: %v", export, p)
	}
}

func (r *registry) handle(ctx *Context, export string, input []byte) (any, error) {
	switch export {
	case abi.ExportListTools:
		if _, err := decodeInput[json.RawMessage](ctx, input, false); err != nil {
			return nil, err
		}
		r.catchUpShared()
		return r.listTools(), nil
	case abi.ExportCallTool:
		p, err := decodeInput[abi.CallToolParams](ctx, input, true)
		if err != nil {
			return nil, err
		}
		return r.callTool(ctx, *p)
	case abi.ExportListResources:
		if _, err := decodeInput[json.RawMessage](ctx, input, false); err != nil {
			return nil, err
		}
		return r.listResources(ctx)
	case abi.ExportListResourceTemplates:
		if _, err := decodeInput[json.RawMessage](ctx, input, false); err != nil {
			return nil, err
		}
		return r.listTemplates(), nil
	case abi.ExportReadResource:
		p, err := decodeInput[abi.ReadResourceParams](ctx, input, true)
		if err != nil {
			return nil, err
		}
		return r.readResource(ctx, p.URI)
	case abi.ExportListPrompts:
		if _, err := decodeInput[json.RawMessage](ctx, input, false); err != nil {
			return nil, err
		}
		return r.listPrompts(), nil
	case abi.ExportGetPrompt:
		p, err := decodeInput[abi.GetPromptParams](ctx, input, true)
		if err != nil {
			return nil, err
		}
		return r.getPrompt(ctx, *p)
	case abi.ExportComplete:
		p, err := decodeInput[abi.CompleteParams](ctx, input, true)
		if err != nil {
			return nil, err
		}
		return r.complete(ctx, *p)
	case abi.ExportListSkills:
		if _, err := decodeInput[json.RawMessage](ctx, input, false); err != nil {
			return nil, err
		}
		return r.listSkills(), nil
	case abi.ExportOnRootsListChanged:
		if _, err := decodeInput[json.RawMessage](ctx, input, false); err != nil {
			return nil, err
		}
		r.mu.RLock()
		f := r.onRoots
		r.mu.RUnlock()
		if f != nil {
			f(ctx)
		}
		return struct{}{}, nil
	}
	return nil, fmt.Errorf("unknown export %q", export)
}

// decodeInput decodes an export's input envelope in one pass: the call
// context into ctx and the request into a T, which must be present when
// needed. Empty input means an empty envelope.
func decodeInput[T any](ctx *Context, input []byte, needed bool) (*T, error) {
	if req, ok := decodeInputFast[T](ctx, input); ok {
		if needed && req == nil {
			return nil, errors.New("input has no request")
		}
		return req, nil
	}
	return decodeInputSlow[T](ctx, input, needed)
}

// decodeInputSlow is decodeInput through encoding/json, apart so that
// only this path allocates the envelope on the heap.
func decodeInputSlow[T any](ctx *Context, input []byte, needed bool) (*T, error) {
	var env struct {
		Request *T          `json:"request"`
		Context abi.Context `json:"context"`
	}
	if len(bytes.TrimSpace(input)) > 0 {
		if err := json.Unmarshal(input, &env); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) && strings.HasPrefix(te.Field, "request") {
				return nil, fmt.Errorf("invalid request: %w", err)
			}
			return nil, fmt.Errorf("invalid input JSON: %w", err)
		}
	}
	ctx.Context = env.Context
	if needed && env.Request == nil {
		return nil, errors.New("input has no request")
	}
	return env.Request, nil
}

func (r *registry) listTools() *abi.ListToolsResult {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := &abi.ListToolsResult{Tools: make([]abi.Tool, 0, len(r.tools))}
	for _, t := range r.tools {
		out.Tools = append(out.Tools, t.def)
	}
	return out
}

func (r *registry) callTool(ctx *Context, p abi.CallToolParams) (*Result, error) {
	t := r.tool(p.Name)
	if t == nil && r.catchUpShared() {
		t = r.tool(p.Name) // another instance may have added it
	}
	if t == nil {
		return nil, fmt.Errorf("unknown tool %q", p.Name)
	}
	res, err := runTool(ctx, t, p.Arguments)
	if err != nil {
		res = Error(err.Error())
	}
	return finish(res), nil
}

// runTool runs a tool handler, turning a panic into an error.
func runTool(ctx *Context, t *toolEntry, args json.RawMessage) (res *Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			if _, ok := p.(unrecovered); ok {
				panic(p)
			}
			Logf(LevelError, "panic in tool %q: %v", t.def.Name, p)
			res, err = nil, fmt.Errorf("panic in tool %q: %v", t.def.Name, p)
		}
	}()
	return t.handler(ctx, args)
}

func finish(r *Result) *Result {
	if r == nil {
		r = NewResult()
	}
	if r.Content == nil {
		r.Content = []abi.Content{}
	}
	return r
}

func (r *registry) listResources(ctx *Context) (*abi.ListResourcesResult, error) {
	r.mu.RLock()
	out := &abi.ListResourcesResult{Resources: make([]abi.Resource, 0, len(r.resources))}
	for _, e := range r.resources {
		out.Resources = append(out.Resources, e.def)
	}
	listers := append([]ResourceLister(nil), r.listers...)
	r.mu.RUnlock()
	for _, l := range listers {
		more, err := l(ctx)
		if err != nil {
			return nil, err
		}
		out.Resources = append(out.Resources, more...)
	}
	return out, nil
}

func (r *registry) listTemplates() *abi.ListResourceTemplatesResult {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := &abi.ListResourceTemplatesResult{ResourceTemplates: make([]abi.ResourceTemplate, 0, len(r.templates))}
	for _, e := range r.templates {
		out.ResourceTemplates = append(out.ResourceTemplates, e.def)
	}
	return out
}

func (r *registry) readResource(ctx *Context, uri string) (*abi.ReadResourceResult, error) {
	if uri == "" {
		return nil, errors.New("request has no uri")
	}
	var (
		static *resourceEntry
		tmpl   *templateEntry
		vars   map[string]string
	)
	r.mu.RLock()
	for _, e := range r.resources {
		if e.def.URI == uri {
			static = e
			break
		}
	}
	if static == nil {
		for _, e := range r.templates {
			if v, ok := e.tmpl.match(uri); ok {
				tmpl, vars = e, v
				break
			}
		}
	}
	r.mu.RUnlock()

	var (
		res *abi.ReadResourceResult
		err error
	)
	switch {
	case static != nil:
		res, err = static.handler(ctx, uri)
	case tmpl != nil:
		res, err = tmpl.handler(ctx, uri, vars)
	default:
		return nil, fmt.Errorf("%w: %s", ErrNotFound, uri)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", uri, err)
	}
	if res == nil {
		res = &abi.ReadResourceResult{}
	}
	if res.Contents == nil {
		res.Contents = []abi.ResourceContents{}
	}
	return res, nil
}

func (r *registry) listPrompts() *abi.ListPromptsResult {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := &abi.ListPromptsResult{Prompts: make([]abi.Prompt, 0, len(r.prompts))}
	for _, e := range r.prompts {
		out.Prompts = append(out.Prompts, e.def)
	}
	return out
}

func (r *registry) prompt(name string) *promptEntry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, e := range r.prompts {
		if e.def.Name == name {
			return e
		}
	}
	return nil
}

func (r *registry) getPrompt(ctx *Context, p abi.GetPromptParams) (*abi.GetPromptResult, error) {
	e := r.prompt(p.Name)
	if e == nil {
		return nil, fmt.Errorf("unknown prompt %q", p.Name)
	}
	if p.Arguments == nil {
		p.Arguments = map[string]string{}
	}
	if err := missingPromptArg(e.def, p.Arguments); err != nil {
		return nil, err
	}
	res, err := e.handler(ctx, p.Arguments)
	if err != nil {
		return nil, fmt.Errorf("prompt %q: %w", p.Name, err)
	}
	if res == nil {
		res = &abi.GetPromptResult{}
	}
	if res.Messages == nil {
		res.Messages = []abi.PromptMessage{}
	}
	return res, nil
}

func (r *registry) complete(ctx *Context, p abi.CompleteParams) (*abi.CompleteResult, error) {
	kind := strings.TrimPrefix(p.Ref.Type, "ref/")
	key := completerKey{kind: kind, arg: p.Argument.Name}
	known := false
	r.mu.RLock()
	switch kind {
	case "prompt":
		key.name = p.Ref.Name
		for _, e := range r.prompts {
			known = known || e.def.Name == p.Ref.Name
		}
	case "resource":
		key.name = p.Ref.URI
		for _, e := range r.templates {
			known = known || e.def.URITemplate == p.Ref.URI
		}
		for _, e := range r.resources {
			known = known || e.def.URI == p.Ref.URI
		}
	default:
		r.mu.RUnlock()
		return nil, fmt.Errorf("unknown reference type %q", p.Ref.Type)
	}
	argc, fallback := r.completers[key], r.completer
	r.mu.RUnlock()

	var args map[string]string
	if p.Context != nil {
		args = p.Context.Arguments
	}
	if args == nil {
		args = map[string]string{}
	}
	switch {
	case argc != nil:
		vals, err := argc(ctx, p.Argument.Value, args)
		if err != nil {
			return nil, fmt.Errorf("complete %s %q: %w", kind, key.name, err)
		}
		return completion(vals), nil
	case fallback != nil:
		c, err := fallback(ctx, p)
		if err != nil {
			return nil, fmt.Errorf("complete %s %q: %w", kind, key.name, err)
		}
		if c == nil {
			c = &abi.Completion{}
		}
		if c.Values == nil {
			c.Values = []string{}
		}
		return &abi.CompleteResult{Completion: *c}, nil
	case known:
		return completion(nil), nil
	}
	return nil, fmt.Errorf("unknown %s %q", kind, key.name)
}

func completion(vals []string) *abi.CompleteResult {
	total := len(vals)
	c := abi.Completion{Values: vals, Total: &total}
	if len(vals) > maxCompletions {
		c.Values, c.HasMore = vals[:maxCompletions], true
	}
	if c.Values == nil {
		c.Values = []string{}
	}
	return &abi.CompleteResult{Completion: c}
}

// FilterPrefix returns the candidates that start with prefix, ignoring
// case — the usual body of an [ArgCompleter].
func FilterPrefix(candidates []string, prefix string) []string {
	out := []string{}
	p := strings.ToLower(prefix)
	for _, c := range candidates {
		if strings.HasPrefix(strings.ToLower(c), p) {
			out = append(out, c)
		}
	}
	return out
}
