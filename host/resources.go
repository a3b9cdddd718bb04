package host

import (
	"context"
	"errors"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/plugins"
)

type uriParams struct {
	URI *string `json:"uri"`
}

func (p *uriParams) decode(req *request) (string, error) {
	if err := decodeParams(req.params, p); err != nil {
		return "", err
	}
	if p.URI == nil {
		return "", jsonrpc.InvalidParams("invalid params: missing uri")
	}
	return *p.URI, nil
}

// readResource serves an exact resource first, then a matching template.
// An unknown URI is -32002 with the URI in data; a plugin failure is a
// JSON-RPC error (-32001 on timeout) naming the plugin and the cause.
func readResource(ctx context.Context, s *session, req *request) (any, error) {
	var p uriParams
	uri, err := p.decode(req)
	if err != nil {
		return nil, err
	}
	sc, release, err := s.scope(ctx, req, func(sc scope) bool { pl, _ := sc.resource(uri); return pl != nil })
	defer release()
	if err != nil {
		return nil, err
	}
	if f := sc.skillFile(uri); f != nil {
		return readSkillFile(s, req, f) // skills.go
	}
	pl, _ := sc.resource(uri)
	if pl == nil {
		return nil, resourceNotFound(uri, sc.didYouMean("resource", uri))
	}
	if c := CallerOf(ctx); c != nil {
		if name := sc.templateName(uri); name != "" && !c.may(name) {
			return nil, forbidden("resource template", name)
		}
	}
	req.served = pl
	cc := abi.Context{ID: req.id, Meta: req.param("_meta"), ProtocolVersion: req.version().String(), Plugin: pl.Name}
	out, err := pl.Read(ctx, req.peer(), uri, cc)
	if errors.Is(err, plugins.ErrNotFound) {
		s.log.Debug("resource not found by its plugin", "plugin", pl.Name, "uri", uri, "err", err)
		return nil, resourceNotFound(uri, "")
	}
	if err != nil {
		return nil, s.pluginError("resource", pl.Name, uri, err)
	}
	if req.state != nil { // a 2026-07-28 result: the owning plugin's hints
		req.hints = s.srv.cacheHints([]*plugins.Plugin{pl})
	}
	return out, nil
}

// resourceNotFound is -32002 with the URI in the message and the data,
// and hint (a "did you mean") after it; the stateless era sends it as
// -32602 (see statelessError).
func resourceNotFound(uri, hint string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: codeResourceNotFound, Message: "Resource not found: " + uri + hint, Data: map[string]string{"uri": uri}}
}

func subscribe(_ context.Context, s *session, req *request) (any, error) {
	var p uriParams
	uri, err := p.decode(req)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.subs[uri] = struct{}{}
	s.mu.Unlock()
	return emptyJSON, nil
}

func unsubscribe(_ context.Context, s *session, req *request) (any, error) {
	var p uriParams
	uri, err := p.decode(req)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	delete(s.subs, uri)
	s.mu.Unlock()
	return emptyJSON, nil
}
