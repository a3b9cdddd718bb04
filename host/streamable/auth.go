package streamable

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
)

// OAuth 2.1 bearer tokens (Options.Auth), as the MCP authorization spec
// asks of an HTTP resource server:
//
//   - GET /.well-known/oauth-protected-resource, with or without the
//     endpoint's path appended, serves the RFC 9728 metadata, to anyone;
//   - every other request (but the probes) needs a valid token in
//     Authorization, or gets 401 with a WWW-Authenticate challenge naming
//     that metadata (and error="invalid_token" when a token was sent);
//   - a request for a tool, prompt or resource template the token's scopes
//     do not unlock gets 403 with error="insufficient_scope" and the scope
//     to ask for, before it reaches the session;
//   - the caller (sub, client_id and what it may use) travels to the core
//     in the ctx of Conn.Handle, which filters lists and writes the audit
//     log. The token itself goes no further than this file.

const wellKnownPRM = "/.well-known/oauth-protected-resource"

// oauth is the Handler's token checking, built from Options.Auth.
type oauth struct {
	v           *auth.Validator
	metadataURL string   // the absolute URL of the metadata, for challenges
	paths       []string // where the metadata is served
	doc         []byte
}

func newOAuth(v *auth.Validator, endpoint string) *oauth {
	if v == nil {
		return nil
	}
	o := &oauth{v: v, doc: v.Metadata()}
	u, _ := url.Parse(v.Resource()) // config checked it
	rpath := strings.TrimSuffix(u.Path, "/")
	o.metadataURL = u.Scheme + "://" + u.Host + wellKnownPRM + rpath
	o.paths = []string{wellKnownPRM, wellKnownPRM + endpoint}
	if rpath != "" && rpath != endpoint {
		o.paths = append(o.paths, wellKnownPRM+rpath) // behind a proxy that rewrites the path
	}
	return o
}

// metadata serves the protected resource metadata and reports whether r
// asked for it.
func (o *oauth) metadata(w http.ResponseWriter, r *http.Request) bool {
	if o == nil || !strings.HasPrefix(r.URL.Path, wellKnownPRM) {
		return false
	}
	for _, p := range o.paths {
		if r.URL.Path != p {
			continue
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			methodNotAllowed(w, "GET")
			return true
		}
		w.Header().Set("Content-Type", ctJSON)
		w.Header().Set("Cache-Control", "max-age=300")
		w.Write(o.doc)
		return true
	}
	return false
}

// identityKey carries the token's *auth.Identity in the request context.
type identityKey struct{}

// authenticate checks r's bearer token. It returns r with the caller
// attached, or writes 401 (503 when the authorization server could not
// be reached) and returns nil.
func (o *oauth) authenticate(w http.ResponseWriter, r *http.Request, h *Handler) *http.Request {
	if o == nil {
		return r
	}
	hdr := r.Header.Get("Authorization")
	if hdr == "" {
		// The first request of every OAuth client: how it finds the metadata.
		h.log.Debug("request refused", "err", "no bearer token", "remote", r.RemoteAddr)
		o.challenge(w, http.StatusUnauthorized, "", "", "Unauthorized: a bearer token is required (see "+o.metadataURL+")")
		return nil
	}
	scheme, tok, _ := strings.Cut(hdr, " ")
	tok = strings.TrimSpace(tok)
	if !strings.EqualFold(scheme, "Bearer") || tok == "" {
		o.challenge(w, http.StatusUnauthorized, "invalid_request", "the Authorization header must be \"Bearer <token>\"", "")
		return nil
	}
	id, err := o.v.Validate(r.Context(), tok)
	if errors.Is(err, auth.ErrUnavailable) {
		h.log.Warn("request refused", "err", err, "remote", r.RemoteAddr)
		httpError(w, http.StatusServiceUnavailable, codeHTTP, "Service Unavailable: the token could not be checked: "+err.Error())
		return nil
	}
	if err != nil {
		h.log.Info("request refused", "err", err, "remote", r.RemoteAddr)
		o.challenge(w, http.StatusUnauthorized, "invalid_token", err.Error(), "")
		return nil
	}
	policy := o.v.Policy()
	caller := &host.Caller{Subject: id.Subject, ClientID: id.ClientID, May: func(name string) bool {
		ok, _ := policy.Check(id.Scopes, name)
		return ok
	}}
	ctx := context.WithValue(host.WithCaller(r.Context(), caller), identityKey{}, id)
	return r.WithContext(ctx)
}

// authorize refuses, with 403, a request for a tool, prompt or resource
// template that r's token does not unlock, and reports whether msg may go
// on. With mirrored set (a stateless-era POST whose Mcp-Name has been
// checked against the body) the name comes from Mcp-Name, so a proxy and
// mcphost decide on the same name; otherwise from the body, since an
// unchecked header could name something else.
func (o *oauth) authorize(w http.ResponseWriter, r *http.Request, h *Handler, msg *jsonrpc.Message, mirrored bool) bool {
	if o == nil || msg.Kind != jsonrpc.KindRequest {
		return true
	}
	id, _ := r.Context().Value(identityKey{}).(*auth.Identity)
	if id == nil {
		return true
	}
	kind, member := "", "name"
	switch string(msg.Method) {
	case "tools/call":
		kind = "tool"
	case "prompts/get":
		kind = "prompt"
	case "resources/read":
		kind, member = "resource template", "uri"
	default:
		return true
	}
	var name string
	if mirrored {
		name = r.Header.Get(hdrName)
	} else {
		name, _ = jsonrpc.Unquote(msg.ParamMembers.Get(member))
	}
	if kind == "resource template" {
		if name = h.srv.ResourceTemplateName(name); name == "" {
			return true // a listed resource, or none: a valid token is enough
		}
	}
	ok, need := o.v.Policy().Check(id.Scopes, name)
	if ok {
		return true
	}
	h.log.Info("request refused", "err", "insufficient scope", kind, name, "need", need, "sub", id.Subject, "client_id", id.ClientID)
	w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope=`+quote(need)+`, resource_metadata=`+quote(o.metadataURL)+
		`, error_description=`+quote(kind+" "+name+" needs scope "+need))
	w.Header().Set("Content-Type", ctJSON)
	w.WriteHeader(http.StatusForbidden)
	w.Write(jsonrpc.AppendError(nil, msg.ID, &jsonrpc.Error{Code: codeHTTP, Message: "Forbidden: insufficient_scope: " + kind + " " + name + " needs scope " + need}))
	return false
}

// challenge writes a 401 (or 400) with the Bearer challenge of RFC 6750
// and RFC 9728: resource_metadata always, error and error_description
// when a token was sent.
func (o *oauth) challenge(w http.ResponseWriter, status int, code, desc, msg string) {
	c := `Bearer resource_metadata=` + quote(o.metadataURL)
	if code != "" {
		c += `, error=` + quote(code) + `, error_description=` + quote(desc)
		msg = "Unauthorized: " + code + ": " + desc
	}
	w.Header().Set("WWW-Authenticate", c)
	httpError(w, status, codeHTTP, msg)
}

// quote makes a quoted-string of an auth-param: RFC 6750 allows no '"' or
// '\' in error_description, and a header no control characters.
func quote(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '"' || r == '\\' || r < 0x20 || r == 0x7f || r > 0x7e {
			return '\''
		}
		return r
	}, s)
	return `"` + s + `"`
}

// callerContext returns ctx carrying the caller r was authenticated as
// (none without Options.Auth) and r's trace context headers: the ctx a
// session's Handle is given.
func callerContext(ctx context.Context, r *http.Request) context.Context {
	if c := host.CallerOf(r.Context()); c != nil {
		ctx = host.WithCaller(ctx, c)
	}
	return host.TraceContext(ctx, r.Header)
}
