package host

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/host/internal/protocol"
	"github.com/mcphost/mcphost/plugins"
)

func getPrompt(ctx context.Context, s *session, req *request) (any, error) {
	var p struct {
		Name      *string           `json:"name"`
		Arguments map[string]string `json:"arguments"`
		Meta      json.RawMessage   `json:"_meta"`
	}
	if err := decodeParams(req.params, &p); err != nil {
		return nil, err
	}
	if p.Name == nil {
		return nil, jsonrpc.InvalidParams("invalid params: missing prompt name")
	}
	sc, release, err := s.scope(ctx, req, func(sc scope) bool { return sc.prompt(*p.Name) != nil })
	defer release()
	if err != nil {
		return nil, err
	}
	pr := sc.prompt(*p.Name)
	if pr == nil {
		return nil, jsonrpc.InvalidParams("unknown prompt: %s%s", *p.Name, sc.didYouMean("prompt", *p.Name))
	}
	if !CallerOf(ctx).may(pr.Name) {
		return nil, forbidden("prompt", pr.Name)
	}
	var missing []string
	for _, a := range pr.Def.Arguments {
		if _, ok := p.Arguments[a.Name]; a.Required && !ok {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return nil, jsonrpc.InvalidParams("prompt %q: missing required arguments: %s", *p.Name, strings.Join(missing, ", "))
	}
	req.served = pr.Plugin
	cc := abi.Context{ID: req.id, Meta: p.Meta, ProtocolVersion: req.version().String(), Plugin: pr.Plugin.Name}
	out, err := pr.Render(ctx, req.peer(), p.Arguments, cc)
	if err != nil {
		return nil, s.pluginError("prompt", pr.Plugin.Name, pr.Def.Name, err)
	}
	return json.RawMessage(protocol.FilterPromptResult(out, req.version())), nil
}

// complete routes completion/complete to the plugin that owns the prompt
// or resource template. A plugin without a complete export offers no
// values.
//
// Plugin results (here and in the other handlers) are not re-validated:
// plugins.Plugin checks that every output is a JSON object of the right
// shape and reports *plugins.OutputError otherwise.
func complete(ctx context.Context, s *session, req *request) (any, error) {
	var p abi.CompleteParams
	if err := decodeParams(req.params, &p); err != nil {
		return nil, err
	}
	sc, release, err := s.scope(ctx, req, nil)
	defer release()
	if err != nil {
		return nil, err
	}
	var owner *plugins.Plugin
	var item string
	switch p.Ref.Type {
	case "ref/prompt":
		pr := sc.prompt(p.Ref.Name)
		if pr == nil {
			return nil, jsonrpc.InvalidParams("unknown prompt: %s%s", p.Ref.Name, sc.didYouMean("prompt", p.Ref.Name))
		}
		if !CallerOf(ctx).may(pr.Name) {
			return nil, forbidden("prompt", pr.Name)
		}
		owner, item = pr.Plugin, pr.Def.Name
		p.Ref = abi.CompleteRef{Type: "prompt", Name: pr.Def.Name}
	case "ref/resource":
		owner = sc.templateOwner(p.Ref.URI)
		if owner == nil {
			return nil, jsonrpc.InvalidParams("unknown resource template: %s", p.Ref.URI)
		}
		if name := sc.templateNamed(p.Ref.URI); name != "" && !CallerOf(ctx).may(name) {
			return nil, forbidden("resource template", name)
		}
		item = p.Ref.URI
		p.Ref = abi.CompleteRef{Type: "resource", URI: p.Ref.URI}
	default:
		return nil, jsonrpc.InvalidParams("invalid params: ref.type must be ref/prompt or ref/resource, not %q", p.Ref.Type)
	}
	cc := abi.Context{ID: req.id, ProtocolVersion: req.version().String(), Plugin: owner.Name}
	out, err := owner.CompleteFor(ctx, req.peer(), p, cc)
	if errors.Is(err, plugins.ErrMissingExport) {
		return noCompletions, nil
	}
	if err != nil {
		return nil, s.pluginError("completion for", owner.Name, item, err)
	}
	return out, nil
}

var noCompletions = json.RawMessage(`{"completion":{"values":[]}}`)

// templateOwner finds the plugin whose resource template (or, failing
// that, resource) has exactly this URI.
func (sc scope) templateOwner(uri string) *plugins.Plugin {
	if sc.g == nil {
		return nil
	}
	for _, t := range sc.g.Templates {
		if t.Def.URITemplate == uri && sc.owns(t.Plugin) {
			return t.Plugin
		}
	}
	if r := sc.g.Resource(uri); r != nil && sc.owns(r.Plugin) {
		return r.Plugin
	}
	return nil
}
