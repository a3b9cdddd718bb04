package host

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/mcphost/mcphost/abi/jsonscan"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/host/internal/protocol"
)

// The stateless era (2026-07-28). A request that carries the per-request
// _meta of this revision, or that reaches a transport connection with no
// session (Streamable HTTP without Mcp-Session-Id), is served on its own:
// its protocol version, client capabilities and log level come from its
// _meta, not from an initialize handshake. initialize still selects the
// 2025 era for the connection (stdio) or the session (HTTP), so one server
// speaks both: see RATIONALE.md, "Why one server for both eras?".

// Keys of the per-request _meta.
const (
	metaVersion      = protocol.MetaVersion
	metaCapabilities = protocol.MetaCapabilities
	metaClientInfo   = "io.modelcontextprotocol/clientInfo"
	metaLogLevel     = "io.modelcontextprotocol/logLevel"
	metaServerInfo   = "io.modelcontextprotocol/serverInfo"
)

// era says which revisions define a method.
type era uint8

const (
	eraBoth      era = iota
	eraLegacy        // initialize-based revisions only (2025-11-25 and before)
	eraStateless     // 2026-07-28 only
)

// statelessState reads a stateless request's params._meta into the client state
// it is served with, or returns the error the request gets: -32602 when a
// required member is missing, -32022 for a version this era does not
// serve.
func statelessState(meta json.RawMessage) (*clientState, error) {
	if !jsonrpc.IsObject(meta) {
		return nil, jsonrpc.InvalidParams("invalid params: missing _meta (the 2026-07-28 revision requires %s and %s in every request)", metaVersion, metaCapabilities)
	}
	// One walk of _meta for the four members (each Member call walks it
	// whole; the last of a repeated key counts, as with Member).
	var rawVersion, rawCaps, rawInfo, rawLevel json.RawMessage
	jsonrpc.EachMember(meta, func(k, v []byte) bool {
		switch {
		case jsonrpc.KeyIs(k, metaVersion):
			rawVersion = v
		case jsonrpc.KeyIs(k, metaCapabilities):
			rawCaps = v
		case jsonrpc.KeyIs(k, metaClientInfo):
			rawInfo = v
		case jsonrpc.KeyIs(k, metaLogLevel):
			rawLevel = v
		}
		return true
	})
	if rawVersion == nil {
		return nil, jsonrpc.InvalidParams("invalid params: _meta is missing %s", metaVersion)
	}
	requested, ok := jsonrpc.Unquote(rawVersion)
	if !ok {
		return nil, jsonrpc.InvalidParams("invalid params: %s must be a string", metaVersion)
	}
	if rawCaps == nil {
		return nil, jsonrpc.InvalidParams("invalid params: _meta is missing %s", metaCapabilities)
	}
	if requested != protocol.Stateless.String() {
		return nil, unsupportedVersion(requested)
	}
	caps, err := parseClientCaps(rawCaps)
	if err != nil {
		return nil, err
	}
	st := &clientState{version: protocol.Stateless, caps: caps, info: rawInfo}
	if l, ok := jsonrpc.Unquote(rawLevel); ok {
		if n, ok := parseLevel(l); ok {
			st.level = n + 1
		}
	}
	return st, nil
}

// supportedVersionList is every revision served, newest first: the
// stateless one per request, the others through initialize.
func supportedVersionList() []string {
	out := []string{protocol.Stateless.String()}
	for v := protocol.Latest; v >= protocol.V20241105; v-- {
		out = append(out, v.String())
	}
	return out
}

func unsupportedVersion(requested string) *jsonrpc.Error {
	return &jsonrpc.Error{
		Code:    codeUnsupportedProtocol,
		Message: "Unsupported protocol version: " + requested,
		Data:    map[string]any{"supported": supportedVersionList(), "requested": requested},
	}
}

// statelessRequest prepares a stateless request, or returns the error it
// gets instead.
func (s *session) statelessRequest(m *method, msg *jsonrpc.Message) (*clientState, error) {
	if m == nil || m.era == eraLegacy {
		return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method not found: %s", msg.Method)
	}
	st, err := statelessState(msg.ParamMembers.Get("_meta"))
	var re *jsonrpc.Error
	if err != nil && asRPC(err, &re) && re.Code == codeUnsupportedProtocol {
		// A known legacy revision in _meta still needs initialize.
		if v, ok := protocol.Parse(re.Data.(map[string]any)["requested"].(string)); ok {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: protocol version %s needs initialize first", v)
		}
	}
	return st, err
}

func asRPC(err error, re **jsonrpc.Error) bool {
	r, ok := err.(*jsonrpc.Error)
	*re = r
	return ok
}

// serverInfoJSON is the value of _meta's serverInfo in stateless results.
func (srv *Server) serverInfoJSON() []byte {
	b, _ := json.Marshal(struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}{srv.opts.Name, srv.opts.Version})
	return b
}

// decorate adds what every stateless result carries: resultType
// ("complete" unless the handler chose another) and the server's identity
// in _meta; cacheable results also get ttlMs and cacheScope: h's when the
// handler chose them (from the plugins that served it), else the server's.
func (srv *Server) decorate(body []byte, m *method, h *cacheHints) []byte {
	if !jsonrpc.IsObject(body) {
		return body
	}
	complete := true
	if rt := jsonrpc.Member(body, "resultType"); rt == nil {
		body = jsonrpc.SetMember(body, "resultType", []byte(`"complete"`))
	} else {
		complete = string(rt) == `"complete"`
	}
	body = jsonrpc.SetMember(body, "_meta", jsonrpc.SetMember(jsonrpc.Member(body, "_meta"), metaServerInfo, srv.serverInfo))
	if m.cache && complete {
		if h == nil {
			h = &cacheHints{ttlMs: srv.opts.CacheTTL.Milliseconds(), scope: srv.opts.CacheScope}
		}
		if jsonrpc.Member(body, "ttlMs") == nil {
			body = jsonrpc.SetMember(body, "ttlMs", strconv.AppendInt(nil, h.ttlMs, 10))
		}
		if jsonrpc.Member(body, "cacheScope") == nil {
			body = jsonrpc.SetMember(body, "cacheScope", jsonscan.AppendString(nil, h.scope))
		}
	}
	return body
}

// discover serves server/discover.
func discover(_ context.Context, s *session, _ *request) (any, error) {
	return s.srv.discoverResult, nil
}

// discoverResult is built once: the same capabilities initialize declares.
// logging is among them though the era removed logging/setLevel: a
// request whose _meta sets io.modelcontextprotocol/logLevel gets
// notifications/message, and clients (MCP Inspector) offer a level only
// to a server that declares logging.
func discoverResult(opts *Options) json.RawMessage {
	type result struct {
		SupportedVersions []string       `json:"supportedVersions"`
		Capabilities      map[string]any `json:"capabilities"`
		Instructions      string         `json:"instructions,omitempty"`
	}
	caps := map[string]any{
		"tools":       map[string]bool{"listChanged": true},
		"resources":   map[string]bool{"subscribe": true, "listChanged": true},
		"prompts":     map[string]bool{"listChanged": true},
		"completions": struct{}{},
		"logging":     struct{}{},
		"extensions":  serverExtensions(), // skills.go
	}
	b, err := json.Marshal(result{supportedVersionList(), caps, opts.Instructions})
	if err != nil {
		panic("host: encode discover result: " + err.Error()) // static data
	}
	return b
}
