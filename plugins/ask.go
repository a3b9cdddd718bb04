package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sandbox"
)

// The questions the MCP server asks plugins: one call each, with the
// request's context, the client behind it (the Peer) and the arguments in,
// and a result or a typed error out. The server needs nothing from the
// sandbox: the Peer type, the errors it decides on and the description of
// a failure are all here.

// Peer is how a plugin call reaches the MCP client whose request it
// serves: its host functions (sampling, elicitation, roots, logs,
// progress, change notifications) go through it.
type Peer = sandbox.Peer

// Errors a caller decides on, with errors.Is.
var (
	// ErrTimeout: the call ran out of time.
	ErrTimeout = sandbox.ErrTimeout
	// ErrMissingExport: the plugin does not implement the question.
	ErrMissingExport = sandbox.ErrMissingExport
)

// Run runs the tool with args (a JSON object; nil means {}) for the
// client behind peer. The arguments are checked against the tool's
// inputSchema and, unless the result is an error result, its
// structuredContent against its outputSchema: both failures are a
// *ValidationError. Any other error is the call's own (see Describe).
func (t *Tool) Run(ctx context.Context, peer Peer, args json.RawMessage, cc abi.Context) (json.RawMessage, error) {
	obs := t.Plugin.core.obs
	if obs == nil {
		return t.run(ctx, peer, args, cc)
	}
	start := time.Now()
	out, err := t.run(ctx, peer, args, cc)
	obs.ToolCall(t.Plugin.Name, t.Name, time.Since(start), Fault(err))
	return out, err
}

func (t *Tool) run(ctx context.Context, peer Peer, args json.RawMessage, cc abi.Context) (json.RawMessage, error) {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	if err := t.validateArguments(args); err != nil {
		return nil, err
	}
	cc.Plugin = t.Plugin.Name
	tc := newToolCall(ctx, peer)
	notes := &tc.notes
	// The arguments were validated against the schema just now, when
	// there is one: the call does not scan them again.
	res, err := t.Plugin.callTool(tc, t.Original, args, cc, t.in != nil)
	if err != nil {
		return nil, err
	}
	// The guest found isError and structuredContent in the pass that
	// checked the result's shape.
	if len(t.Def.OutputSchema) > 0 && !res.IsError {
		if err := t.validateStructured(res.Structured); err != nil {
			return nil, err
		}
	}
	// What the person must hear from mcphost itself (an answer that
	// could not be kept) follows the plugin's content.
	return notes.AppendTo(res.JSON)
}

// Read reads uri, which p serves, for the client behind peer. A guest that
// reports the URI unknown (the guest SDK's ErrNotFound) gives an error
// matching ErrNotFound.
func (p *Plugin) Read(ctx context.Context, peer Peer, uri string, cc abi.Context) (json.RawMessage, error) {
	cc.Plugin = p.Name
	if out, ok := p.readApp(uri); ok { // apps.go
		return out, nil
	}
	guestURI := uri
	if g, ok := p.appGuest[uri]; ok { // a page moved under p's namespace (apps.go)
		guestURI = g
	}
	out, err := p.readResource(sandbox.WithPeer(ctx, peer), guestURI, cc)
	if err != nil && guestNotFound(err) {
		return nil, fmt.Errorf("plugin %q: resource %q: %w (%w)", p.Name, uri, ErrNotFound, err)
	}
	if err != nil {
		return nil, err
	}
	if guestURI != uri {
		out = renameContents(out, guestURI, uri)
	}
	return p.appCSP(out), nil
}

// Render renders the prompt with args for the client behind peer.
func (pr *Prompt) Render(ctx context.Context, peer Peer, args map[string]string, cc abi.Context) (json.RawMessage, error) {
	cc.Plugin = pr.Plugin.Name
	return pr.Plugin.getPrompt(sandbox.WithPeer(ctx, peer), pr.Def.Name, args, cc)
}

// CompleteFor asks p to complete an argument for the client behind peer.
// A plugin without the export gives an error matching ErrMissingExport.
func (p *Plugin) CompleteFor(ctx context.Context, peer Peer, params abi.CompleteParams, cc abi.Context) (json.RawMessage, error) {
	cc.Plugin = p.Name
	return p.complete(sandbox.WithPeer(ctx, peer), params, cc)
}

// RootsChanged tells p that the roots of the client behind peer changed.
func (p *Plugin) RootsChanged(ctx context.Context, peer Peer, cc abi.Context) error {
	cc.Plugin = p.Name
	return p.rootsListChanged(sandbox.WithPeer(ctx, peer), cc)
}

// guestNotFound reports whether a guest failed with the guest SDK's
// "resource not found" error, which crosses the ABI as its message.
func guestNotFound(err error) bool {
	var ce *sandbox.CallError
	if errors.As(err, &ce) {
		return ce.Kind == sandbox.KindGuestError && strings.Contains(ce.Detail, abi.ResourceNotFound)
	}
	return strings.Contains(err.Error(), abi.ResourceNotFound)
}

// Describe says why a plugin call failed, for people: the sandbox's kind
// and what the plugin said ("trap: panic: runtime error: …", "timeout:
// exceeded 5s"), a bad output's message, or the error itself. The
// runtime's internals (wasm stack traces, "recovered by wazero", the Go
// runtime's register dumps) are left out; err.Error() keeps them for logs.
func Describe(err error) string {
	var ce *sandbox.CallError
	var oe *OutputError
	switch {
	case errors.As(err, &oe):
		return "bad output: " + oe.Msg
	case errors.As(err, &ce):
		kind := ce.Kind.String()
		detail := ce.Detail
		if ce.Kind != sandbox.KindGuestError {
			// A guest error's detail is the plugin's message as it is; the
			// others carry runtime internals.
			detail = faultText(detail)
		}
		if detail == "" || detail == kind {
			return kind
		}
		return kind + ": " + detail
	}
	return err.Error()
}
