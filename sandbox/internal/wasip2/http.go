package wasip2

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcphost/mcphost/sandbox/internal/component"
)

// HTTPDoer sends a request. The sandbox gives each component its
// module's client, so every egress rule it applies (redirects, dialled
// addresses) applies to wasi:http too.
type HTTPDoer interface {
	Do(*http.Request) (*http.Response, error)
}

// fields is a wasi:http fields resource (headers and trailers). It owns
// its list alone (a request's or response's headers are handed out as
// clones), so what it holds is charged to it.
type fields struct {
	list      [][2]string // name (as given), value
	immutable bool
	held      held
}

// newFields is an empty fields charged to hc's instance.
func newFields(hc *component.HostCall) *fields { return &fields{held: holdFor(hc)} }

// entryBytes is what one field costs the host.
func entryBytes(kv [2]string) int64 { return int64(len(kv[0])+len(kv[1])) + 2*component.SlotBytes }

// add appends a field, charged to f.
func (f *fields) add(name, value string) {
	kv := [2]string{name, value}
	f.held.grow("a header field", entryBytes(kv))
	f.list = append(f.list, kv)
}

// delete removes every field named name (in any case), and what it held.
func (f *fields) delete(name string) {
	f.list = slices.DeleteFunc(f.list, func(kv [2]string) bool {
		if strings.EqualFold(kv[0], name) {
			f.held.shrink(entryBytes(kv))
			return true
		}
		return false
	})
}

// clone is a copy of f, charged to hc's instance.
func (f *fields) clone(hc *component.HostCall) *fields {
	c := newFields(hc)
	var n int64
	for _, kv := range f.list {
		n += entryBytes(kv)
	}
	c.held.grow("a copy of header fields", n)
	c.list = slices.Clone(f.list)
	return c
}

func (f *fields) Drop() {
	f.list = nil
	f.held.free()
}

// forbiddenHeaders are refused in requests, as wasmtime refuses them:
// they belong to the connection, which the host owns, or name the
// destination (host), which only the request's authority may.
var forbiddenHeaders = []string{"connection", "host", "http2-settings", "keep-alive", "proxy-authenticate",
	"proxy-authorization", "proxy-connection", "te", "transfer-encoding", "upgrade"}

// checkField returns the header-error case name for a bad field, or "".
func checkField(name string, value []byte) string {
	if !validFieldName(name) || bytes.ContainsAny(value, "\r\n\x00") {
		return "invalid-syntax"
	}
	if slices.Contains(forbiddenHeaders, strings.ToLower(name)) {
		return "forbidden"
	}
	return ""
}

// validFieldName reports whether name is an HTTP token (RFC 9110).
func validFieldName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range []byte(name) {
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

type outgoingRequest struct {
	method    component.Case // of the guest's method variant
	methodT   *component.Type
	scheme    string
	authority string
	path      string
	headers   *fields
	body      *outgoingBody
	// held is what the strings above hold, by field (method, scheme,
	// authority, path), charged as each is set.
	held [4]held
}

// setString charges a new value of the request's string k and frees the
// old one's.
func (r *outgoingRequest) setString(hc *component.HostCall, k int, n int) {
	r.held[k].free()
	r.held[k] = holdFor(hc)
	r.held[k].grow("a request's "+[...]string{"method", "scheme", "authority", "path"}[k], int64(n))
}

func (r *outgoingRequest) Drop() {
	for i := range r.held {
		r.held[i].free()
	}
	r.headers.Drop()
	if r.body != nil {
		r.body.Drop()
	}
}

// outgoingBody is a request's body: the request and the guest's handle
// share it, and dropping either discards what was written.
type outgoingBody struct {
	buf      bytes.Buffer
	finished bool
	dropped  bool
	held     held
}

// Write is what the body's output stream writes, charged to the body.
func (b *outgoingBody) Write(p []byte) (int, error) {
	if b.dropped {
		return 0, errors.New("the request's body was dropped")
	}
	b.held.grow("a request body", int64(len(p)))
	return b.buf.Write(p)
}

func (b *outgoingBody) Drop() {
	b.dropped = true
	b.buf = bytes.Buffer{}
	b.held.free()
}

// requestOptions holds the guest's timeouts, each an option<duration>
// (nanoseconds) as the guest set it, by timeout kind.
type requestOptions struct{ timeouts [numTimeouts]component.Case }

// The request-options timeouts, by the phase of a request each bounds.
const (
	connectTimeout = iota
	firstByteTimeout
	betweenBytesTimeout
	numTimeouts
)

var timeoutNames = [numTimeouts]string{"connect-timeout", "first-byte-timeout", "between-bytes-timeout"}

// duration returns timeout k, or 0 when unset.
func (o *requestOptions) duration(k int) time.Duration {
	if o == nil || o.timeouts[k].Index == 0 {
		return 0
	}
	return time.Duration(min(o.timeouts[k].Val.(uint64), math.MaxInt64))
}

// futureResponse runs its request when the guest first asks for the
// response: by then a streamed body has been written and finished.
type futureResponse struct {
	req   *outgoingRequest
	opts  *requestOptions
	taken bool
}

func (f *futureResponse) Drop() {
	if !f.taken {
		f.req.Drop()
	}
}

type incomingResponse struct {
	status  uint16
	headers *fields
	body    []byte
	held    held // the body's bytes (the headers are charged to themselves)
}

func (r *incomingResponse) Drop() {
	r.headers.Drop()
	r.body = nil
	r.held.free()
}

// incomingBody holds a response's body until its stream takes it (once).
type incomingBody struct {
	r        *bytes.Reader
	held     held
	streamed bool
}

func (b *incomingBody) Drop() {
	if !b.streamed {
		b.held.free()
	}
}

type futureTrailers struct{}

// addHTTP adds wasi:http: its types, resource by resource, and the
// outgoing handler.
func addHTTP(add func(iface, name string, f component.HostFunc)) {
	m := func(name string, f component.HostFunc) { add("wasi:http/types", name, f) }
	addFields(m)
	addOutgoingRequest(m)
	addRequestOptions(m)
	addOutgoingBody(m)
	addIncomingResponse(m)
	add("wasi:http/outgoing-handler", "handle", outgoingHandle)
}

// headerError is the err(header-error) result named name, for hc's result type.
func headerError(hc *component.HostCall, name string) any {
	return component.Case{Index: 1, Val: component.Case{Index: enumCase(hc.Type.Result.Err, name)}}
}

// addFields adds the fields resource (headers and trailers).
func addFields(m func(name string, f component.HostFunc)) {
	m("[constructor]fields", func(hc *component.HostCall, _ []any) (any, error) { return newFields(hc), nil })
	m("[static]fields.from-list", func(hc *component.HostCall, args []any) (any, error) {
		f := newFields(hc)
		for _, e := range args[0].([]any) {
			kv := e.([]any)
			name, value := kv[0].(string), kv[1].([]byte)
			if bad := checkField(name, value); bad != "" {
				f.Drop()
				return headerError(hc, bad), nil
			}
			f.add(name, string(value))
		}
		return ok(f), nil
	})
	m("[method]fields.get", func(_ *component.HostCall, args []any) (any, error) {
		f, name := args[0].(*fields), args[1].(string)
		out := []any{}
		for _, kv := range f.list {
			if strings.EqualFold(kv[0], name) {
				out = append(out, []byte(kv[1]))
			}
		}
		return out, nil
	})
	m("[method]fields.has", func(_ *component.HostCall, args []any) (any, error) {
		f, name := args[0].(*fields), args[1].(string)
		return slices.ContainsFunc(f.list, func(kv [2]string) bool { return strings.EqualFold(kv[0], name) }), nil
	})
	m("[method]fields.set", func(hc *component.HostCall, args []any) (any, error) {
		f, name := args[0].(*fields), args[1].(string)
		if f.immutable {
			return headerError(hc, "immutable"), nil
		}
		values := args[2].([]any)
		for _, v := range values {
			if bad := checkField(name, v.([]byte)); bad != "" {
				return headerError(hc, bad), nil
			}
		}
		f.delete(name)
		for _, v := range values {
			f.add(name, string(v.([]byte)))
		}
		return ok(nil), nil
	})
	m("[method]fields.delete", func(hc *component.HostCall, args []any) (any, error) {
		f := args[0].(*fields)
		if f.immutable {
			return headerError(hc, "immutable"), nil
		}
		f.delete(args[1].(string))
		return ok(nil), nil
	})
	m("[method]fields.append", func(hc *component.HostCall, args []any) (any, error) {
		f, name, v := args[0].(*fields), args[1].(string), args[2].([]byte)
		if f.immutable {
			return headerError(hc, "immutable"), nil
		}
		if bad := checkField(name, v); bad != "" {
			return headerError(hc, bad), nil
		}
		f.add(name, string(v))
		return ok(nil), nil
	})
	m("[method]fields.entries", func(_ *component.HostCall, args []any) (any, error) {
		f := args[0].(*fields)
		out := make([]any, len(f.list))
		for i, kv := range f.list {
			out[i] = []any{kv[0], []byte(kv[1])}
		}
		return out, nil
	})
	m("[method]fields.clone", func(hc *component.HostCall, args []any) (any, error) { return args[0].(*fields).clone(hc), nil })
}

// addOutgoingRequest adds the outgoing-request resource: its headers,
// body, method, path, authority and scheme.
func addOutgoingRequest(m func(name string, f component.HostFunc)) {
	m("[constructor]outgoing-request", func(hc *component.HostCall, args []any) (any, error) {
		h := args[0].(*fields)
		h.immutable = true
		return &outgoingRequest{headers: h, path: "/", scheme: "https"}, nil
	})
	m("[method]outgoing-request.body", func(hc *component.HostCall, args []any) (any, error) {
		r := args[0].(*outgoingRequest)
		if r.body != nil {
			return component.Case{Index: 1}, nil
		}
		r.body = &outgoingBody{held: holdFor(hc)}
		return ok(r.body), nil
	})
	m("[method]outgoing-request.method", func(hc *component.HostCall, args []any) (any, error) {
		r := args[0].(*outgoingRequest)
		if r.methodT == nil {
			return component.Case{Index: enumCase(hc.Type.Result, "get")}, nil
		}
		return r.method, nil
	})
	m("[method]outgoing-request.set-method", func(hc *component.HostCall, args []any) (any, error) {
		r := args[0].(*outgoingRequest)
		r.method, r.methodT = args[1].(component.Case), hc.Type.Params[1].Type
		n := 0
		if s, isStr := r.method.Val.(string); isStr {
			n = len(s)
		}
		r.setString(hc, 0, n)
		return ok(nil), nil
	})
	m("[method]outgoing-request.path-with-query", func(_ *component.HostCall, args []any) (any, error) {
		return optString(args[0].(*outgoingRequest).path), nil
	})
	m("[method]outgoing-request.set-path-with-query", func(hc *component.HostCall, args []any) (any, error) {
		r, c := args[0].(*outgoingRequest), args[1].(component.Case)
		r.path = "/"
		if c.Index == 1 {
			r.path = c.Val.(string)
		}
		r.setString(hc, 3, len(r.path))
		return ok(nil), nil
	})
	m("[method]outgoing-request.authority", func(_ *component.HostCall, args []any) (any, error) {
		return optString(args[0].(*outgoingRequest).authority), nil
	})
	m("[method]outgoing-request.set-authority", func(hc *component.HostCall, args []any) (any, error) {
		r, c := args[0].(*outgoingRequest), args[1].(component.Case)
		r.authority = ""
		if c.Index == 1 {
			r.authority = c.Val.(string)
		}
		r.setString(hc, 2, len(r.authority))
		return ok(nil), nil
	})
	m("[method]outgoing-request.scheme", func(hc *component.HostCall, args []any) (any, error) {
		r := args[0].(*outgoingRequest)
		t := hc.Type.Result.Elem
		switch r.scheme {
		case "http":
			return component.Case{Index: 1, Val: component.Case{Index: enumCase(t, "HTTP")}}, nil
		case "https":
			return component.Case{Index: 1, Val: component.Case{Index: enumCase(t, "HTTPS")}}, nil
		}
		return component.Case{Index: 1, Val: component.Case{Index: enumCase(t, "other"), Val: r.scheme}}, nil
	})
	m("[method]outgoing-request.set-scheme", func(hc *component.HostCall, args []any) (any, error) {
		r, c := args[0].(*outgoingRequest), args[1].(component.Case)
		r.scheme = "https"
		if c.Index == 1 {
			s := c.Val.(component.Case)
			t := hc.Type.Params[1].Type.Elem
			r.scheme = strings.ToLower(t.Fields[s.Index].Name)
			if s.Val != nil {
				r.scheme = s.Val.(string)
			}
		}
		r.setString(hc, 1, len(r.scheme))
		return ok(nil), nil
	})
	m("[method]outgoing-request.headers", func(hc *component.HostCall, args []any) (any, error) {
		return args[0].(*outgoingRequest).headers.cloneImmutable(hc), nil
	})
}

// optString is an option<string>, none for "".
func optString(s string) any {
	if s == "" {
		return component.Case{Index: 0}
	}
	return component.Case{Index: 1, Val: s}
}

// addRequestOptions adds the request-options resource: the timeouts of a
// request's phases.
func addRequestOptions(m func(name string, f component.HostFunc)) {
	m("[constructor]request-options", func(*component.HostCall, []any) (any, error) { return &requestOptions{}, nil })
	for k, o := range timeoutNames {
		// Each bounds its phase of the request; the call's own timeout
		// bounds them all (send).
		m("[method]request-options."+o, func(_ *component.HostCall, args []any) (any, error) {
			return args[0].(*requestOptions).timeouts[k], nil
		})
		m("[method]request-options.set-"+o, func(_ *component.HostCall, args []any) (any, error) {
			args[0].(*requestOptions).timeouts[k] = args[1].(component.Case)
			return ok(nil), nil
		})
	}
}

// addOutgoingBody adds the outgoing-body resource: its stream and finish.
func addOutgoingBody(m func(name string, f component.HostFunc)) {
	m("[method]outgoing-body.write", func(_ *component.HostCall, args []any) (any, error) {
		return ok(&outputStream{w: args[0].(*outgoingBody)}), nil
	})
	m("[static]outgoing-body.finish", func(_ *component.HostCall, args []any) (any, error) {
		args[0].(*outgoingBody).finished = true
		if c := args[1].(component.Case); c.Index == 1 {
			c.Val.(*fields).Drop() // trailers are not sent
		}
		return ok(nil), nil
	})
}

// addIncomingResponse adds what a sent request gives back: the future
// response (which sends it), the response, its body and its trailers.
func addIncomingResponse(m func(name string, f component.HostFunc)) {
	m("[method]future-incoming-response.subscribe", func(*component.HostCall, []any) (any, error) { return &pollable{}, nil })
	m("[method]future-incoming-response.get", func(hc *component.HostCall, args []any) (any, error) {
		f := args[0].(*futureResponse)
		if f.taken {
			return component.Case{Index: 1, Val: component.Case{Index: 1}}, nil
		}
		f.taken = true
		errT := hc.Type.Result.Elem.Ok.Err
		resp, code := send(hc, f.req, f.opts, errT)
		f.req.Drop() // sent: what it held is no longer needed
		if code != nil {
			return component.Case{Index: 1, Val: ok(component.Case{Index: 1, Val: code})}, nil
		}
		return component.Case{Index: 1, Val: ok(ok(resp))}, nil
	})
	m("[method]incoming-response.status", func(_ *component.HostCall, args []any) (any, error) {
		return uint64(args[0].(*incomingResponse).status), nil
	})
	m("[method]incoming-response.headers", func(hc *component.HostCall, args []any) (any, error) {
		return args[0].(*incomingResponse).headers.cloneImmutable(hc), nil
	})
	m("[method]incoming-response.consume", func(_ *component.HostCall, args []any) (any, error) {
		r := args[0].(*incomingResponse)
		if r.body == nil {
			return component.Case{Index: 1}, nil
		}
		b := &incomingBody{r: bytes.NewReader(r.body), held: r.held.move(int64(len(r.body)))}
		r.body = nil
		return ok(b), nil
	})
	m("[method]incoming-body.stream", func(_ *component.HostCall, args []any) (any, error) {
		// At most once (as wasi:http says): the stream takes the body's
		// bytes, and what they hold, with it.
		b := args[0].(*incomingBody)
		if b.streamed {
			return component.Case{Index: 1}, nil
		}
		b.streamed = true
		h := b.held.move(b.held.n)
		return ok(&inputStream{r: b.r, c: &h}), nil
	})
	m("[static]incoming-body.finish", func(_ *component.HostCall, args []any) (any, error) {
		args[0].(*incomingBody).Drop()
		return &futureTrailers{}, nil
	})
	m("[method]future-trailers.subscribe", func(*component.HostCall, []any) (any, error) { return &pollable{}, nil })
	m("[method]future-trailers.get", func(*component.HostCall, []any) (any, error) {
		return component.Case{Index: 1, Val: ok(ok(component.Case{Index: 0}))}, nil
	})
	m("http-error-code", func(*component.HostCall, []any) (any, error) { return component.Case{Index: 0}, nil })
}

// outgoingHandle is wasi:http/outgoing-handler.handle: it refuses every
// request of an instance without a client, and otherwise returns a future
// response that sends the request when the guest first asks for it (send).
func outgoingHandle(hc *component.HostCall, args []any) (any, error) {
	r := args[0].(*outgoingRequest)
	if stateOf(hc).HTTP == nil {
		r.Drop()
		return component.Case{Index: 1, Val: component.Case{Index: enumCase(hc.Type.Result.Err, "HTTP-request-denied")}}, nil
	}
	f := &futureResponse{req: r}
	if c := args[1].(component.Case); c.Index == 1 {
		f.opts = c.Val.(*requestOptions)
	}
	return ok(f), nil
}

func (f *fields) cloneImmutable(hc *component.HostCall) *fields {
	c := f.clone(hc)
	c.immutable = true
	return c
}

// send runs req through the instance's client, which applies every egress
// rule when it dials (a refusal, told apart by Refused, is
// HTTP-request-denied). The call's context bounds the whole request and
// opts' timeouts bound its phases: connecting (connection-timeout), waiting
// for the response's first byte (HTTP-response-timeout) and waiting
// between two reads of the body (connection-read-timeout); when the call's
// own timeout ends a phase first, the answer is that phase's code too. The
// body is read up to MaxHTTPBytes (HTTP-response-body-size with the
// limit). A failure is an error-code of type errT.
func send(hc *component.HostCall, req *outgoingRequest, opts *requestOptions, errT *component.Type) (*incomingResponse, any) {
	w := stateOf(hc)
	code := func(name string) any { return component.Case{Index: enumCase(errT, name)} }
	internal := func(msg string) any {
		return component.Case{Index: enumCase(errT, "internal-error"), Val: component.Case{Index: 1, Val: msg}}
	}
	// The authority alone names the destination: no user information
	// (which Go's client would send as credentials) and a path that
	// cannot move it.
	if req.authority == "" || strings.ContainsAny(req.authority, "@/\\?#") || !strings.HasPrefix(req.path, "/") {
		return nil, code("HTTP-request-URI-invalid")
	}
	u, err := url.Parse(req.scheme + "://" + req.authority + req.path)
	if err != nil || u.Host != req.authority || u.User != nil {
		return nil, code("HTTP-request-URI-invalid")
	}
	// Headers the guest set went through checkField; a response's
	// headers, which the guest may pass on, did not.
	for _, kv := range req.headers.list {
		if slices.Contains(forbiddenHeaders, strings.ToLower(kv[0])) {
			if w.Log != nil {
				w.Log.Warn("http request refused: a header only the host may set", "url", u.Redacted(), "header", kv[0])
			}
			return nil, code("HTTP-request-denied")
		}
	}
	method := "GET"
	if req.methodT != nil {
		c := req.method
		method = strings.ToUpper(req.methodT.Fields[c.Index].Name)
		if c.Val != nil {
			method = c.Val.(string)
		}
	}
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body.buf.Bytes())
	}
	ctx, cancel := context.WithCancelCause(hc.Ctx)
	defer cancel(nil)
	ph := &phases{opts: opts, cancel: cancel}
	defer ph.next(numTimeouts)
	ph.next(connectTimeout)
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn:              func(httptrace.GotConnInfo) { ph.next(firstByteTimeout) },
		GotFirstResponseByte: func() { ph.next(betweenBytesTimeout) },
	})
	hr, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, internal(err.Error())
	}
	for _, kv := range req.headers.list {
		hr.Header.Add(kv[0], kv[1])
	}
	timedOut := func() any {
		name := ph.code()
		if w.Log != nil {
			// why tells a request-options timeout ("first-byte-timeout of
			// 300ms passed") from the call's ("context deadline exceeded").
			w.Log.Warn("http request timed out", "url", u.Redacted(), "code", name, "why", context.Cause(ctx))
		}
		return code(name)
	}
	resp, err := w.HTTP.Do(hr)
	if err != nil {
		if w.Refused != nil && w.Refused(err) {
			return nil, code("HTTP-request-denied")
		}
		switch {
		case ctx.Err() != nil:
			return nil, timedOut()
		case errors.Is(err, syscall.ECONNREFUSED):
			return nil, code("connection-refused")
		case errors.Is(err, syscall.ECONNRESET):
			return nil, code("connection-reset")
		}
		return nil, internal(err.Error())
	}
	defer resp.Body.Close()
	limit := w.MaxHTTPBytes
	if limit <= 0 {
		limit = 50 << 20
	}
	tooBig := func() any {
		if w.Log != nil {
			w.Log.Warn("http response body over the limit; raise the plugin's memory for a larger one",
				"url", u.Redacted(), "limit", limit)
		}
		return component.Case{Index: enumCase(errT, "HTTP-response-body-size"), Val: component.Case{Index: 1, Val: uint64(limit)}}
	}
	if resp.ContentLength > limit {
		return nil, tooBig()
	}
	b, err := io.ReadAll(io.LimitReader(readNotifier{resp.Body, ph}, limit+1))
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, timedOut()
	case err != nil:
		return nil, internal(err.Error())
	case int64(len(b)) > limit:
		return nil, tooBig()
	}
	h := newFields(hc)
	h.immutable = true
	for k, vs := range resp.Header {
		for _, v := range vs {
			h.add(strings.ToLower(k), v)
		}
	}
	r := &incomingResponse{status: uint16(resp.StatusCode), headers: h, body: b, held: holdFor(hc)}
	r.held.grow("a response body", int64(len(b)))
	return r, nil
}

// phases tracks which phase of a request is under way and cancels the
// request when the phase outlasts its request-options timeout. The
// transport reports phases from its own goroutines.
type phases struct {
	opts   *requestOptions
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	phase  int
	timer  *time.Timer
}

// next enters phase k (numTimeouts: done) and arms its timeout, if set.
func (p *phases) next(k int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	p.phase = k
	if k == numTimeouts {
		return
	}
	if d := p.opts.duration(k); d > 0 {
		err := fmt.Errorf("%s of %v passed", timeoutNames[k], d)
		p.timer = time.AfterFunc(d, func() { p.cancel(err) })
	}
}

// code is the error-code case of a timeout in the current phase.
func (p *phases) code() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch p.phase {
	case connectTimeout:
		return "connection-timeout"
	case firstByteTimeout:
		return "HTTP-response-timeout"
	}
	return "connection-read-timeout"
}

// readNotifier restarts the between-bytes timeout after each read that
// brought bytes.
type readNotifier struct {
	r  io.Reader
	ph *phases
}

func (r readNotifier) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	if n > 0 {
		r.ph.next(betweenBytesTimeout)
	}
	return n, err
}
