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
	"unsafe"
)

// maxVarBytes bounds one instance's vars, as go-sdk's default does.
const maxVarBytes = 1 << 20

// configGet returns a new block holding the config value named by the
// block at key, or 0 when there is none.
func (g *nativeGuest) configGet(key uint64) uint64 {
	v, ok := g.b.lim.Config[string(g.k.read(key))]
	if !ok {
		return 0
	}
	return g.k.write([]byte(v))
}

// varGet returns a new block holding the var named by the block at key, or
// 0. Vars live as long as the instance.
func (g *nativeGuest) varGet(key uint64) uint64 {
	v, ok := g.vars[string(g.k.read(key))]
	if !ok {
		return 0
	}
	return g.k.write(v)
}

var errVarsFull = errors.New("variable store is full")

// varSet sets the var named by the block at key to the block at val; val 0
// deletes it. Over maxVarBytes it panics, which fails the call, as go-sdk
// does (with the same accounting).
func (g *nativeGuest) varSet(key, val uint64) {
	name := string(g.k.read(key))
	if val == 0 {
		if old, ok := g.vars[name]; ok {
			g.varBytes -= varCost(name, old)
			delete(g.vars, name)
		}
		return
	}
	v := bytes.Clone(g.k.read(val))
	size := g.varBytes + varCost(name, v)
	if old, ok := g.vars[name]; ok {
		size -= varCost(name, old)
	}
	if size >= maxVarBytes {
		panic(errVarsFull)
	}
	if g.vars == nil {
		g.vars = make(map[string][]byte)
	}
	g.vars[name] = v
	g.varBytes = size
}

func varCost(name string, v []byte) int {
	return int(unsafe.Sizeof([]byte{})+unsafe.Sizeof("")) + len(name) + len(v)
}

// httpRequestJSON is the request of http_request.
type httpRequestJSON struct {
	URL     string            `json:"url"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
}

// httpRequest serves http_request: the block at req holds the request as
// JSON, the block at body (0: none) its body. It returns a new block with
// the response body, or 0 when the body is empty. A refused connection
// (egress.go), a bad request, a failure or an oversized body panics, which
// fails the call, as go-sdk does; the request is bounded by ctx, the
// call's own.
func (g *nativeGuest) httpRequest(ctx context.Context, req, body uint64) uint64 {
	g.status, g.headers = 0, nil
	var r httpRequestJSON
	if err := json.Unmarshal(g.k.read(req), &r); err != nil {
		panic(fmt.Errorf("invalid http request: %w", err))
	}
	if r.Method == "" {
		r.Method = "GET"
	}
	r.Method = strings.ToUpper(r.Method)
	if _, err := url.Parse(r.URL); err != nil {
		panic(fmt.Errorf("invalid url: %w", err))
	}
	var rd io.Reader
	if body != 0 {
		rd = bytes.NewReader(bytes.Clone(g.k.read(body)))
	}
	hr, err := http.NewRequestWithContext(ctx, r.Method, r.URL, rd)
	if err != nil {
		panic(err)
	}
	for k, v := range r.Headers {
		hr.Header.Set(k, v)
	}
	hr, sp := startHTTP(hr)
	resp, err := g.b.client.Do(hr)
	if sp != nil {
		endHTTP(sp, resp, err)
	}
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	h := make(map[string]string, len(resp.Header))
	for k, v := range resp.Header {
		h[strings.ToLower(k)] = strings.Join(v, ",")
	}
	g.headers, _ = json.Marshal(h)
	g.status = int32(resp.StatusCode)
	max := maxHTTPBytes(g.b.lim)
	b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	switch {
	case err != nil:
		panic(err)
	case int64(len(b)) > max:
		panic(fmt.Errorf("http response body over %d bytes", max))
	case len(b) == 0:
		return 0
	}
	off := g.k.write(b)
	if off == 0 {
		panic(errors.New("http response body does not fit in the kernel's memory"))
	}
	return off
}

// maxHTTPBytes bounds a response body: go-sdk's default, and well inside
// the kernel's memory.
func maxHTTPBytes(lim Limits) int64 {
	return int64(min(defaultMaxHTTPBytes, int(lim.MemoryPages)*pageSize/4))
}
