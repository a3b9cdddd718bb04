package component

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// HTTPDoer sends a request. The sandbox gives each component its
// module's client, so every egress rule it applies (redirects, dialled
// addresses) applies to wasi:http too.
type HTTPDoer interface {
	Do(*http.Request) (*http.Response, error)
}

// fields is a wasi:http fields resource (headers and trailers).
type fields struct {
	list      [][2]string // name (as given), value
	immutable bool
}

func (f *fields) clone() *fields {
	return &fields{list: slices.Clone(f.list)}
}

// forbiddenHeaders are refused in requests, as wasmtime refuses them:
// they belong to the connection, which the host owns.
var forbiddenHeaders = []string{"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "http2-settings"}

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
	method    Case // of the guest's method variant
	methodT   *Type
	scheme    string
	authority string
	path      string
	headers   *fields
	body      *outgoingBody
}

type outgoingBody struct {
	buf      bytes.Buffer
	finished bool
}

type requestOptions struct{}

// futureResponse runs its request when the guest first asks for the
// response: by then a streamed body has been written and finished.
type futureResponse struct {
	req   *outgoingRequest
	taken bool
}

type incomingResponse struct {
	status  uint16
	headers *fields
	body    []byte
}

type incomingBody struct{ r *bytes.Reader }

type futureTrailers struct{}

func addHTTP(add func(iface, name string, f HostFunc)) {
	types := "wasi:http/types"
	m := func(name string, f HostFunc) { add(types, name, f) }
	hdrErr := func(hc *HostCall, name string) any {
		return Case{Index: 1, Val: Case{Index: enumCase(hc.Type.Result.Err, name)}}
	}
	m("[constructor]fields", func(*HostCall, []any) (any, error) { return &fields{}, nil })
	m("[static]fields.from-list", func(hc *HostCall, args []any) (any, error) {
		f := &fields{}
		for _, e := range args[0].([]any) {
			kv := e.([]any)
			name, value := kv[0].(string), kv[1].([]byte)
			if bad := checkField(name, value); bad != "" {
				return hdrErr(hc, bad), nil
			}
			f.list = append(f.list, [2]string{name, string(value)})
		}
		return ok(f), nil
	})
	m("[method]fields.get", func(_ *HostCall, args []any) (any, error) {
		f, name := args[0].(*fields), args[1].(string)
		out := []any{}
		for _, kv := range f.list {
			if strings.EqualFold(kv[0], name) {
				out = append(out, []byte(kv[1]))
			}
		}
		return out, nil
	})
	m("[method]fields.has", func(_ *HostCall, args []any) (any, error) {
		f, name := args[0].(*fields), args[1].(string)
		return slices.ContainsFunc(f.list, func(kv [2]string) bool { return strings.EqualFold(kv[0], name) }), nil
	})
	del := func(f *fields, name string) {
		f.list = slices.DeleteFunc(f.list, func(kv [2]string) bool { return strings.EqualFold(kv[0], name) })
	}
	m("[method]fields.set", func(hc *HostCall, args []any) (any, error) {
		f, name := args[0].(*fields), args[1].(string)
		if f.immutable {
			return hdrErr(hc, "immutable"), nil
		}
		values := args[2].([]any)
		for _, v := range values {
			if bad := checkField(name, v.([]byte)); bad != "" {
				return hdrErr(hc, bad), nil
			}
		}
		del(f, name)
		for _, v := range values {
			f.list = append(f.list, [2]string{name, string(v.([]byte))})
		}
		return ok(nil), nil
	})
	m("[method]fields.delete", func(hc *HostCall, args []any) (any, error) {
		f := args[0].(*fields)
		if f.immutable {
			return hdrErr(hc, "immutable"), nil
		}
		del(f, args[1].(string))
		return ok(nil), nil
	})
	m("[method]fields.append", func(hc *HostCall, args []any) (any, error) {
		f, name, v := args[0].(*fields), args[1].(string), args[2].([]byte)
		if f.immutable {
			return hdrErr(hc, "immutable"), nil
		}
		if bad := checkField(name, v); bad != "" {
			return hdrErr(hc, bad), nil
		}
		f.list = append(f.list, [2]string{name, string(v)})
		return ok(nil), nil
	})
	m("[method]fields.entries", func(_ *HostCall, args []any) (any, error) {
		f := args[0].(*fields)
		out := make([]any, len(f.list))
		for i, kv := range f.list {
			out[i] = []any{kv[0], []byte(kv[1])}
		}
		return out, nil
	})
	m("[method]fields.clone", func(_ *HostCall, args []any) (any, error) { return args[0].(*fields).clone(), nil })

	m("[constructor]outgoing-request", func(hc *HostCall, args []any) (any, error) {
		h := args[0].(*fields)
		h.immutable = true
		return &outgoingRequest{headers: h, path: "/", scheme: "https"}, nil
	})
	m("[method]outgoing-request.body", func(_ *HostCall, args []any) (any, error) {
		r := args[0].(*outgoingRequest)
		if r.body != nil {
			return Case{Index: 1}, nil
		}
		r.body = &outgoingBody{}
		return ok(r.body), nil
	})
	m("[method]outgoing-request.method", func(hc *HostCall, args []any) (any, error) {
		r := args[0].(*outgoingRequest)
		if r.methodT == nil {
			return Case{Index: enumCase(hc.Type.Result, "get")}, nil
		}
		return r.method, nil
	})
	m("[method]outgoing-request.set-method", func(hc *HostCall, args []any) (any, error) {
		r := args[0].(*outgoingRequest)
		r.method, r.methodT = args[1].(Case), hc.Type.Params[1].Type
		return ok(nil), nil
	})
	optString := func(s string) any {
		if s == "" {
			return Case{Index: 0}
		}
		return Case{Index: 1, Val: s}
	}
	m("[method]outgoing-request.path-with-query", func(_ *HostCall, args []any) (any, error) {
		return optString(args[0].(*outgoingRequest).path), nil
	})
	m("[method]outgoing-request.set-path-with-query", func(_ *HostCall, args []any) (any, error) {
		r, c := args[0].(*outgoingRequest), args[1].(Case)
		r.path = "/"
		if c.Index == 1 {
			r.path = c.Val.(string)
		}
		return ok(nil), nil
	})
	m("[method]outgoing-request.authority", func(_ *HostCall, args []any) (any, error) {
		return optString(args[0].(*outgoingRequest).authority), nil
	})
	m("[method]outgoing-request.set-authority", func(_ *HostCall, args []any) (any, error) {
		r, c := args[0].(*outgoingRequest), args[1].(Case)
		r.authority = ""
		if c.Index == 1 {
			r.authority = c.Val.(string)
		}
		return ok(nil), nil
	})
	m("[method]outgoing-request.scheme", func(hc *HostCall, args []any) (any, error) {
		r := args[0].(*outgoingRequest)
		t := hc.Type.Result.Elem
		switch r.scheme {
		case "http":
			return Case{Index: 1, Val: Case{Index: enumCase(t, "HTTP")}}, nil
		case "https":
			return Case{Index: 1, Val: Case{Index: enumCase(t, "HTTPS")}}, nil
		}
		return Case{Index: 1, Val: Case{Index: enumCase(t, "other"), Val: r.scheme}}, nil
	})
	m("[method]outgoing-request.set-scheme", func(hc *HostCall, args []any) (any, error) {
		r, c := args[0].(*outgoingRequest), args[1].(Case)
		r.scheme = "https"
		if c.Index == 1 {
			s := c.Val.(Case)
			t := hc.Type.Params[1].Type.Elem
			r.scheme = strings.ToLower(t.Fields[s.Index].Name)
			if s.Val != nil {
				r.scheme = s.Val.(string)
			}
		}
		return ok(nil), nil
	})
	m("[method]outgoing-request.headers", func(_ *HostCall, args []any) (any, error) {
		return args[0].(*outgoingRequest).headers, nil
	})
	m("[constructor]request-options", func(*HostCall, []any) (any, error) { return &requestOptions{}, nil })
	for _, o := range []string{"connect-timeout", "first-byte-timeout", "between-bytes-timeout"} {
		// The call's own timeout bounds every request; these are kept
		// for guests that set them, and read back as unset.
		m("[method]request-options."+o, func(*HostCall, []any) (any, error) { return Case{Index: 0}, nil })
		m("[method]request-options.set-"+o, func(*HostCall, []any) (any, error) { return ok(nil), nil })
	}
	m("[method]outgoing-body.write", func(_ *HostCall, args []any) (any, error) {
		b := args[0].(*outgoingBody)
		return ok(&outputStream{w: &b.buf}), nil
	})
	m("[static]outgoing-body.finish", func(_ *HostCall, args []any) (any, error) {
		args[0].(*outgoingBody).finished = true
		return ok(nil), nil
	})
	m("[method]future-incoming-response.subscribe", func(*HostCall, []any) (any, error) { return &pollable{}, nil })
	m("[method]future-incoming-response.get", func(hc *HostCall, args []any) (any, error) {
		f := args[0].(*futureResponse)
		if f.taken {
			return Case{Index: 1, Val: Case{Index: 1}}, nil
		}
		f.taken = true
		errT := hc.Type.Result.Elem.Ok.Err
		resp, code := send(hc, f.req, errT)
		if code != nil {
			return Case{Index: 1, Val: ok(Case{Index: 1, Val: code})}, nil
		}
		return Case{Index: 1, Val: ok(ok(resp))}, nil
	})
	m("[method]incoming-response.status", func(_ *HostCall, args []any) (any, error) {
		return uint64(args[0].(*incomingResponse).status), nil
	})
	m("[method]incoming-response.headers", func(_ *HostCall, args []any) (any, error) {
		return args[0].(*incomingResponse).headers.cloneImmutable(), nil
	})
	m("[method]incoming-response.consume", func(_ *HostCall, args []any) (any, error) {
		r := args[0].(*incomingResponse)
		if r.body == nil {
			return Case{Index: 1}, nil
		}
		b := &incomingBody{r: bytes.NewReader(r.body)}
		r.body = nil
		return ok(b), nil
	})
	m("[method]incoming-body.stream", func(_ *HostCall, args []any) (any, error) {
		return ok(&inputStream{r: args[0].(*incomingBody).r}), nil
	})
	m("[static]incoming-body.finish", func(*HostCall, []any) (any, error) { return &futureTrailers{}, nil })
	m("[method]future-trailers.subscribe", func(*HostCall, []any) (any, error) { return &pollable{}, nil })
	m("[method]future-trailers.get", func(*HostCall, []any) (any, error) {
		return Case{Index: 1, Val: ok(ok(Case{Index: 0}))}, nil
	})
	m("http-error-code", func(*HostCall, []any) (any, error) { return Case{Index: 0}, nil })

	add("wasi:http/outgoing-handler", "handle", func(hc *HostCall, args []any) (any, error) {
		r := args[0].(*outgoingRequest)
		if wasiOf(hc).HTTP == nil {
			return Case{Index: 1, Val: Case{Index: enumCase(hc.Type.Result.Err, "HTTP-request-denied")}}, nil
		}
		return ok(&futureResponse{req: r}), nil
	})
}

func (f *fields) cloneImmutable() *fields {
	c := f.clone()
	c.immutable = true
	return c
}

// send runs req through the instance's client, which applies every egress
// rule when it dials (a refusal, told apart by Refused, is
// HTTP-request-denied); the call's context bounds it and the body is read
// up to MaxHTTPBytes. A failure is an error-code of type errT.
func send(hc *HostCall, req *outgoingRequest, errT *Type) (*incomingResponse, any) {
	w := wasiOf(hc)
	internal := func(msg string) any {
		return Case{Index: enumCase(errT, "internal-error"), Val: Case{Index: 1, Val: msg}}
	}
	u, err := url.Parse(req.scheme + "://" + req.authority + req.path)
	if err != nil || req.authority == "" {
		return nil, Case{Index: enumCase(errT, "HTTP-request-URI-invalid")}
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
	hr, err := http.NewRequestWithContext(hc.Ctx, method, u.String(), body)
	if err != nil {
		return nil, internal(err.Error())
	}
	for _, kv := range req.headers.list {
		if strings.EqualFold(kv[0], "host") {
			hr.Host = kv[1]
			continue
		}
		hr.Header.Add(kv[0], kv[1])
	}
	resp, err := w.HTTP.Do(hr)
	if err != nil {
		if w.Refused != nil && w.Refused(err) {
			return nil, Case{Index: enumCase(errT, "HTTP-request-denied")}
		}
		if hc.Ctx.Err() != nil {
			return nil, Case{Index: enumCase(errT, "connection-timeout")}
		}
		return nil, internal(err.Error())
	}
	defer resp.Body.Close()
	limit := w.MaxHTTPBytes
	if limit <= 0 {
		limit = 50 << 20
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, internal(err.Error())
	}
	if int64(len(b)) > limit {
		return nil, internal(fmt.Sprintf("response body over %d bytes", limit))
	}
	h := &fields{immutable: true}
	for k, vs := range resp.Header {
		for _, v := range vs {
			h.list = append(h.list, [2]string{strings.ToLower(k), v})
		}
	}
	return &incomingResponse{status: uint16(resp.StatusCode), headers: h, body: b}, nil
}
