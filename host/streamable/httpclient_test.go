package streamable

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host"
)

// httpTest is a server behind a real loopback listener and the handler
// serving it.
type httpTest struct {
	t   *testing.T
	srv *host.Server
	h   *Handler
	ts  *httptest.Server
	url string // the MCP endpoint
}

func startHTTP(t *testing.T, srv *host.Server, opts Options) *httpTest {
	t.Helper()
	h := NewHandler(srv, opts)
	ts := httptest.NewServer(h) // 127.0.0.1
	t.Cleanup(func() {
		h.Close() // ends the streams, so Close below does not wait on them
		ts.Close()
	})
	return &httpTest{t: t, srv: srv, h: h, ts: ts, url: ts.URL + h.opts.Path}
}

// httpClient speaks to an httpTest as an MCP client does.
type httpClient struct {
	t       *testing.T
	ht      *httpTest
	hc      *http.Client
	session string
	version string // MCP-Protocol-Version to send; "" for none
	header  http.Header
}

func (ht *httpTest) client() *httpClient {
	return &httpClient{t: ht.t, ht: ht, hc: ht.ts.Client(), header: http.Header{}}
}

// do sends one request with the client's headers and returns the
// response (the caller closes its body).
func (c *httpClient) do(method, url, body string, hdr ...string) *http.Response {
	c.t.Helper()
	resp, err := c.try(method, url, body, hdr...)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

// try is do for goroutines other than the test's: it returns the error.
func (c *httpClient) try(method, url, body string, hdr ...string) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	c.t.Cleanup(cancel)
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
	} else {
		req.Header.Set("Accept", "text/event-stream")
	}
	if c.session != "" {
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	if c.version != "" {
		req.Header.Set("MCP-Protocol-Version", c.version)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			if hdr[i+1] != "" {
				req.Host = hdr[i+1]
			}
		} else if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
		} else {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, url, err)
	}
	return resp, nil
}

// background posts body on another goroutine; the channel receives the
// response's content type and body, or the error.
func (c *httpClient) background(body string) <-chan string {
	out := make(chan string, 1)
	go func() {
		resp, err := c.try(http.MethodPost, c.ht.url, body)
		if err != nil {
			out <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			out <- err.Error()
			return
		}
		out <- fmt.Sprintf("%d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}()
	return out
}

// post sends a message to the MCP endpoint.
func (c *httpClient) post(body string, hdr ...string) *http.Response {
	c.t.Helper()
	return c.do(http.MethodPost, c.ht.url, body, hdr...)
}

// initialize runs the handshake: initialize, then notifications/initialized
// (which must get 202).
func (c *httpClient) initialize(version, caps string) {
	c.t.Helper()
	resp := c.post(fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":%s,"clientInfo":{"name":"test","version":"1"}}}`, version, caps))
	body := readAll(c.t, resp)
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"result"`) {
		c.t.Fatalf("initialize: got %d %s", resp.StatusCode, body)
	}
	c.session = resp.Header.Get("Mcp-Session-Id")
	if c.session == "" {
		c.t.Fatal("initialize: no Mcp-Session-Id")
	}
	c.version = version
	c.notify(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// notify posts a notification or response, which must get 202.
func (c *httpClient) notify(body string) {
	c.t.Helper()
	resp := c.post(body)
	if got := readAll(c.t, resp); resp.StatusCode != http.StatusAccepted || got != "" {
		c.t.Fatalf("posting %s: got %d %q; want 202 and no body", body, resp.StatusCode, got)
	}
}

// call posts a request and returns the JSON response body (the response
// must be application/json).
func (c *httpClient) call(body string) string {
	c.t.Helper()
	resp := c.post(body)
	got := readAll(c.t, resp)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
		c.t.Fatalf("posting %s: got %d %s %s; want 200 application/json", body, resp.StatusCode, resp.Header.Get("Content-Type"), got)
	}
	return got
}

// stream posts a request whose answer must be an SSE stream.
func (c *httpClient) stream(body string) *sseStream {
	c.t.Helper()
	resp := c.post(body)
	return c.sse(resp)
}

// get opens an SSE stream with GET.
func (c *httpClient) get(hdr ...string) *sseStream {
	c.t.Helper()
	return c.sse(c.do(http.MethodGet, c.ht.url, "", hdr...))
}

func (c *httpClient) sse(resp *http.Response) *sseStream {
	c.t.Helper()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		c.t.Fatalf("got %d %q %s; want 200 text/event-stream", resp.StatusCode, resp.Header.Get("Content-Type"), readAll(c.t, resp))
	}
	s := &sseStream{t: c.t, resp: resp, events: make(chan sseEvent, 256)}
	go s.read()
	c.t.Cleanup(func() { resp.Body.Close() })
	return s
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	return string(b)
}

// sseEvent is one event of an SSE stream, as a client parses it.
type sseEvent struct {
	id, event, data, retry string
}

// sseStream parses an SSE response on its own goroutine, which ends with
// the body (events is closed then).
type sseStream struct {
	t      *testing.T
	resp   *http.Response
	events chan sseEvent
}

func (s *sseStream) read() {
	defer close(s.events)
	br := bufio.NewReader(s.resp.Body)
	var ev sseEvent
	var fields bool
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" {
			if fields {
				s.events <- ev
			}
			ev, fields = sseEvent{}, false
			continue
		}
		name, val, _ := strings.Cut(line, ":")
		val = strings.TrimPrefix(val, " ")
		fields = true
		switch name {
		case "id":
			ev.id = val
		case "event":
			ev.event = val
		case "data":
			if ev.data != "" {
				ev.data += "\n"
			}
			ev.data += val
		case "retry":
			ev.retry = val
		}
	}
}

// next returns the next event; the stream must not end first.
func (s *sseStream) next() sseEvent {
	s.t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			s.t.Fatal("the SSE stream ended; want another event")
		}
		return ev
	case <-time.After(guard):
		s.t.Fatal("no SSE event")
	}
	return sseEvent{}
}

// message returns the data of the next event that carries a message,
// skipping events without data (priming, retry).
func (s *sseStream) message() string {
	s.t.Helper()
	for {
		if ev := s.next(); ev.data != "" {
			if ev.id == "" {
				s.t.Errorf("event %q has no id; want every event to carry one", ev.data)
			}
			return ev.data
		}
	}
}

// end waits for the stream to end and returns the events it still had.
func (s *sseStream) end() []sseEvent {
	s.t.Helper()
	var rest []sseEvent
	timeout := time.After(guard)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				return rest
			}
			rest = append(rest, ev)
		case <-timeout:
			s.t.Fatal("the SSE stream did not end")
			return rest
		}
	}
}

// close drops the connection from the client side.
func (s *sseStream) close() { s.resp.Body.Close() }

// msgMethod returns a message's method ("" for responses).
func msgMethod(msg string) string {
	var w struct {
		Method string `json:"method"`
	}
	json.Unmarshal([]byte(msg), &w)
	return w.Method
}

// compactJSON canonicalises a literal for comparison with wire bytes.
func compactJSON(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("bad JSON literal %s: %v", s, err)
	}
	return b.String()
}
