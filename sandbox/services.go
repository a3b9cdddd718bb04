package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/mcphost/mcphost/abi"
)

// configGet returns a new block holding the config value named by the
// block at key, or 0 when there is none.
func (g *nativeGuest) configGet(key uint64) uint64 {
	v, ok := g.b.lim.Config[string(g.k.Read(key))]
	if !ok {
		return 0
	}
	return g.k.Write([]byte(v))
}

// httpRequestJSON is the request of http_request.
type httpRequestJSON struct {
	URL     string            `json:"url"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
}

// httpRequest serves Extism's http_request: the block at req holds the
// request as JSON, the block at body (0: none) its body. It returns a new
// block with the response body, or 0 when the body is empty. A refused
// connection (egress.go), a bad request, a failure or an oversized body
// panics, which fails the call and loses the instance, as go-sdk does:
// the Extism ABI has no other way to say it. Guests that can hear an
// error use mcphost's http host function instead (httpFunc).
func (g *nativeGuest) httpRequest(ctx context.Context, req, body uint64) uint64 {
	g.status, g.headers = 0, nil
	var r httpRequestJSON
	if err := json.Unmarshal(g.k.Read(req), &r); err != nil {
		panic(fmt.Errorf("invalid http request: %w", err))
	}
	var b []byte
	if body != 0 {
		b = bytes.Clone(g.k.Read(body))
	}
	status, h, rb, err := sendHTTP(ctx, g.b.client, g.b.lim, r, b)
	if err != nil {
		panic(err)
	}
	g.headers, _ = json.Marshal(h)
	g.status = int32(status)
	if len(rb) == 0 {
		return 0
	}
	off := g.k.Write(rb)
	if off == 0 {
		panic(errors.New("http response body does not fit in the kernel's memory"))
	}
	return off
}

// sendHTTP makes one outbound request through client (the module's,
// whose dialer enforces the egress rules) under ctx, the call's own, and
// returns the status, the headers (lower-case names, repeated ones joined
// with ",") and the body, read up to maxHTTPBytes(lim).
func sendHTTP(ctx context.Context, client *http.Client, lim Limits, r httpRequestJSON, body []byte) (int, map[string]string, []byte, error) {
	if c, ok := ctx.(*callContext); ok {
		// A polled guest's callContext is reused by its next call
		// (native.go), and net/http's goroutines (a dial, the watch of
		// the request's ctx) may read theirs after this one returns.
		cp := *c
		ctx = &cp
	}
	if r.Method == "" {
		r.Method = "GET"
	}
	r.Method = strings.ToUpper(r.Method)
	if _, err := url.Parse(r.URL); err != nil {
		return 0, nil, nil, fmt.Errorf("invalid url: %w", err)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hr, err := http.NewRequestWithContext(ctx, r.Method, r.URL, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	for k, v := range r.Headers {
		hr.Header.Set(k, v)
	}
	hr, sp := startHTTP(hr)
	resp, err := client.Do(hr)
	if sp != nil {
		endHTTP(sp, resp, err)
	}
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	h := make(map[string]string, len(resp.Header))
	for k, v := range resp.Header {
		h[strings.ToLower(k)] = strings.Join(v, ",")
	}
	max := maxHTTPBytes(lim)
	b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	switch {
	case err != nil:
		return 0, nil, nil, err
	case int64(len(b)) > max:
		return 0, nil, nil, fmt.Errorf("http response body over %d bytes", max)
	}
	return resp.StatusCode, h, b, nil
}

// errNoHTTP is the http host function's reply where no module client
// exists: on go-sdk, which only tests use.
var errNoHTTP = errors.New("the http host function is served on mcphost's own kernel only")

// httpFunc serves mcphost's http host function (abi.HostHTTP): the request
// of sendHTTP as JSON, with its body in it. Every failure, a refusal by
// the egress rules or by a person (or a consent question still to be
// answered: an input_required round), a bad request, a network error, an
// oversized body, is a reply {"error":…} the guest handles, never a trap,
// so the instance and its state stay (issue 38).
func httpFunc(ctx context.Context, lim Limits, payload []byte, perr error) []byte {
	if perr != nil {
		return hostError(perr)
	}
	g, _ := ctx.Value(kernelKey{}).(*nativeGuest)
	if g == nil {
		return hostError(errNoHTTP)
	}
	var r abi.HTTPRequest
	if err := json.Unmarshal(payload, &r); err != nil {
		return hostError(fmt.Errorf("invalid http request: %w", err))
	}
	status, h, body, err := sendHTTP(ctx, g.b.client, lim, httpRequestJSON{URL: r.URL, Method: r.Method, Headers: r.Headers}, r.Body)
	var rep abi.HTTPReply
	if err != nil {
		var re *RefusedError
		rep.Error, rep.Refused = err.Error(), errors.As(err, &re)
	} else {
		rep.Status, rep.Headers, rep.Body = status, h, body
	}
	b, err := json.Marshal(rep)
	if err != nil {
		return hostError(err)
	}
	return b
}

// maxHTTPBytes bounds a response body: go-sdk's default, and well inside
// the kernel's memory.
func maxHTTPBytes(lim Limits) int64 {
	return int64(min(defaultMaxHTTPBytes, int(lim.MemoryPages)*pageSize/4))
}
