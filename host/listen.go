package host

import (
	"context"
	"encoding/json"

	"github.com/mcphost/mcphost/host/internal/jsonrpc"
)

// listener is one open subscriptions/listen request (2026-07-28): what it
// asked to hear, and where notifications go (the request's own stream,
// tagged with its id as the subscription id).
type listener struct {
	sess                      *session
	id                        json.RawMessage
	tools, prompts, resources bool
	uris                      map[string]bool
}

type listenParams struct {
	Notifications struct {
		ToolsListChanged      bool     `json:"toolsListChanged"`
		PromptsListChanged    bool     `json:"promptsListChanged"`
		ResourcesListChanged  bool     `json:"resourcesListChanged"`
		ResourceSubscriptions []string `json:"resourceSubscriptions"`
	} `json:"notifications"`
}

// listen serves subscriptions/listen: it acknowledges the filter (all of
// it: every kind is supported), then delivers matching notifications until
// the client cancels the request or goes away, or the server shuts down;
// only then does it answer, which the transports drop when the client has
// gone.
func listen(ctx context.Context, s *session, req *request) (any, error) {
	var p listenParams
	if err := decodeParams(req.params, &p); err != nil {
		return nil, err
	}
	n := p.Notifications
	l := &listener{sess: s, id: req.id, tools: n.ToolsListChanged, prompts: n.PromptsListChanged,
		resources: n.ResourcesListChanged, uris: map[string]bool{}}
	for _, u := range n.ResourceSubscriptions {
		l.uris[u] = true
	}
	ack, err := json.Marshal(map[string]any{"notifications": n})
	if err != nil {
		return nil, err
	}
	srv := s.srv
	// Registered and acknowledged under srv.mu, which every delivery takes:
	// nothing reaches the stream before the acknowledgement.
	srv.mu.Lock()
	srv.listeners[l] = struct{}{}
	s.notify("notifications/subscriptions/acknowledged", l.tag(ack), req.id)
	srv.mu.Unlock()
	defer func() {
		srv.mu.Lock()
		delete(srv.listeners, l)
		srv.mu.Unlock()
	}()
	select {
	case <-ctx.Done():
	case <-s.goneCh:
	}
	return json.RawMessage(l.tag(emptyJSON)), nil
}

// metaSubscription is the _meta key that names the listen request a
// notification answers.
const metaSubscription = "io.modelcontextprotocol/subscriptionId"

// tag sets _meta's subscriptionId in params.
func (l *listener) tag(params []byte) []byte {
	return jsonrpc.SetMember(params, "_meta", jsonrpc.SetMember(jsonrpc.Member(params, "_meta"), metaSubscription, l.id))
}

// wants reports whether l asked for method (about uri, for
// resources/updated).
func (l *listener) wants(method, uri string) bool {
	switch method {
	case "notifications/tools/list_changed":
		return l.tools
	case "notifications/prompts/list_changed":
		return l.prompts
	case "notifications/resources/list_changed":
		return l.resources
	case "notifications/resources/updated":
		return l.uris[uri]
	}
	return false
}

// notifyListeners sends a change notification to every listener that
// asked for it.
func (srv *Server) notifyListeners(method string, params []byte) {
	uri, _ := jsonrpc.Unquote(jsonrpc.Member(params, "uri"))
	// Chosen under srv.mu, sent outside it: a client slow to read must not
	// hold up the others, or the registration of new listeners. A listener
	// registered (and acknowledged) after the choice misses this change,
	// which happened before it listened.
	srv.mu.Lock()
	var to []*listener
	for l := range srv.listeners {
		if l.wants(method, uri) {
			to = append(to, l)
		}
	}
	srv.mu.Unlock()
	for _, l := range to {
		l.sess.notify(method, l.tag(params), l.id)
	}
}
