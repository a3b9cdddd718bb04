package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/abi/jsonscan"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/host/internal/protocol"
	"github.com/mcphost/mcphost/host/internal/tasks"
)

// handler serves one request. It returns a result (json.RawMessage is sent
// as is; anything else goes through encoding/json) or an error (*jsonrpc.Error
// chooses the code; any other error is -32603).
type handler func(ctx context.Context, s *session, req *request) (any, error)

type method struct {
	name       string
	fn         handler
	inline     bool // cheap: served on the reader goroutine, in order
	beforeInit bool // allowed before initialize
	era        era  // the revisions that define it
	cache      bool // stateless results carry ttlMs and cacheScope
	input      bool // may answer input_required (stateless era)
}

// decodeParams unmarshals params (absent means {}) into v; a mismatch is
// -32602.
func decodeParams(params json.RawMessage, v any) error {
	if params == nil {
		return nil
	}
	err := json.Unmarshal(params, v)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &te) && te.Field != "":
		return jsonrpc.InvalidParams("invalid params: %s must be %s, not %s", te.Field, jsonscan.KindOfType(te.Type), te.Value)
	case errors.As(err, &te):
		return jsonrpc.InvalidParams("invalid params: must be %s, not %s", jsonscan.KindOfType(te.Type), te.Value)
	}
	return jsonrpc.InvalidParams("invalid params: %v", err)
}

type initializeParams struct {
	ProtocolVersion *string         `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ClientInfo      json.RawMessage `json:"clientInfo"`
}

func initialize(_ context.Context, s *session, req *request) (any, error) {
	var p initializeParams
	if err := decodeParams(req.params, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion == nil {
		return nil, jsonrpc.InvalidParams("invalid params: missing protocolVersion")
	}
	caps, err := parseClientCaps(p.Capabilities)
	if err != nil {
		return nil, err
	}
	st := &clientState{version: protocol.Negotiate(*p.ProtocolVersion), caps: caps, info: p.ClientInfo}
	if !s.state.CompareAndSwap(nil, st) {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: already initialized")
	}
	s.log.Info("session initialized", "requested", *p.ProtocolVersion, "version", st.version.String(),
		"client", string(p.ClientInfo))
	return s.srv.initResult[st.version], nil
}

func ping(context.Context, *session, *request) (any, error) { return emptyJSON, nil }

// Client capabilities that gate server→client requests.
type clientCaps struct {
	sampling, roots        bool
	elicitForm, elicitURL  bool
	samplingTools, rootsLC bool
	tasks                  bool // the io.modelcontextprotocol/tasks extension (taskcall.go)
}

func parseClientCaps(raw json.RawMessage) (clientCaps, error) {
	var c struct {
		Sampling *struct {
			Tools json.RawMessage `json:"tools"`
		} `json:"sampling"`
		Roots *struct {
			ListChanged bool `json:"listChanged"`
		} `json:"roots"`
		Elicitation *struct {
			Form json.RawMessage `json:"form"`
			URL  json.RawMessage `json:"url"`
		} `json:"elicitation"`
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if err := decodeParams(raw, &c); err != nil {
		return clientCaps{}, err
	}
	caps := clientCaps{sampling: c.Sampling != nil, roots: c.Roots != nil, tasks: c.Extensions[tasks.Extension] != nil}
	if c.Sampling != nil {
		caps.samplingTools = c.Sampling.Tools != nil
	}
	if c.Roots != nil {
		caps.rootsLC = c.Roots.ListChanged
	}
	if e := c.Elicitation; e != nil {
		caps.elicitURL = e.URL != nil
		// An empty elicitation object means form mode only.
		caps.elicitForm = e.Form != nil || e.URL == nil
	}
	return caps, nil
}

// initResults builds the InitializeResult for every version once.
func initResults(opts *Options) map[protocol.Version]json.RawMessage {
	type impl struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	type result struct {
		ProtocolVersion string         `json:"protocolVersion"`
		Capabilities    map[string]any `json:"capabilities"`
		ServerInfo      impl           `json:"serverInfo"`
		Instructions    string         `json:"instructions,omitempty"`
	}
	out := make(map[protocol.Version]json.RawMessage)
	for v := protocol.V20241105; v <= protocol.Latest; v++ {
		caps := map[string]any{
			"tools":     map[string]bool{"listChanged": true},
			"resources": map[string]bool{"subscribe": true, "listChanged": true},
			"prompts":   map[string]bool{"listChanged": true},
			"logging":   struct{}{},
			// extensions (SEP-2133) are negotiated in any version.
			"extensions": map[string]any{extApps: appsCapability()}, // apps.go
		}
		if v >= protocol.V20250326 { // 2024-11-05 did not define the capability
			caps["completions"] = struct{}{}
		}
		if v >= protocol.V20251125 { // extensions (SEP-2133): skills.go
			caps["extensions"] = map[string]any{extApps: appsCapability(), extSkills: skillsCapability}
		}
		b, err := json.Marshal(result{v.String(), caps, impl{opts.Name, opts.Version}, opts.Instructions})
		if err != nil {
			panic(fmt.Sprintf("host: encode initialize result: %v", err)) // static data
		}
		out[v] = b
	}
	return out
}

// Logging levels, in increasing severity (RFC 5424).
// emptyJSON is the result of methods that return nothing; never modified.
var emptyJSON = json.RawMessage("{}")

var logLevels = [...]string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

func parseLevel(s string) (int32, bool) {
	for i, l := range logLevels {
		if l == s {
			return int32(i), true
		}
	}
	return 0, false
}

func setLevel(_ context.Context, s *session, req *request) (any, error) {
	var p struct {
		Level *string `json:"level"`
	}
	if err := decodeParams(req.params, &p); err != nil {
		return nil, err
	}
	if p.Level == nil {
		return nil, jsonrpc.InvalidParams("invalid params: missing level")
	}
	l, ok := parseLevel(*p.Level)
	if !ok {
		return nil, jsonrpc.InvalidParams("invalid log level %q: want one of debug, info, notice, warning, error, critical, alert, emergency", *p.Level)
	}
	s.level.Store(l + 1)
	return emptyJSON, nil
}

// admits reports whether a log message at level goes to this session: only
// once the client has chosen a level, and only at or above it.
func (s *session) admits(level string) bool {
	min := s.level.Load()
	if min == 0 {
		return false
	}
	l, ok := parseLevel(level)
	return ok && l+1 >= min
}

// notification serves a client notification, in order, on the reader.
// Notifications are never answered, not even when they are malformed.
func (s *session) notification(ctx context.Context, msg *jsonrpc.Message) {
	switch string(msg.Method) {
	case "notifications/initialized":
		if s.state.Load() != nil {
			s.ready.Store(true)
		}
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		}
		if json.Unmarshal(msg.Params, &p) == nil && p.RequestID != nil {
			s.cancelRequest(p.RequestID, p.Reason)
		}
	case "notifications/roots/list_changed":
		s.rootsChanged(ctx)
	case "notifications/progress":
		// Nothing to do: we send no progress-tracked requests.
	default:
		s.log.Debug("ignored notification", "method", string(msg.Method))
	}
}

// rootsChanged tells every plugin exporting on_roots_list_changed that the
// client's roots changed. It runs in its own goroutine (owned by the
// session), since plugins may ask the client for the new roots through the
// Peer, which would otherwise wait on the reader that must deliver the
// answer.
func (s *session) rootsChanged(ctx context.Context) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		g, release := s.srv.reg.Acquire()
		defer release()
		req := &request{sess: s, method: "notifications/roots/list_changed"}
		cc := abi.Context{ProtocolVersion: req.version().String()}
		for _, p := range g.Plugins {
			if err := p.RootsChanged(ctx, req.peer(), cc); err != nil {
				s.log.Warn("roots list changed", "plugin", p.Name, "err", err)
			}
		}
	}()
}
