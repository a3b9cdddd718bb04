package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestComponentHTTP runs the C component net (wasi:http outgoing-handler
// called through a hand-written canonical ABI) against a loopback server:
// a request allowed by allowed_hosts, one refused, each request-options
// timeout, the call's own timeout, and a body over the limit that
// Extism's http_request has too.
func TestComponentHTTP(t *testing.T) {
	wasm := componentWasm(t, "net")
	// 64 pages make the body limit 1 MiB (maxHTTPBytes).
	lim := Limits{Instances: 1, Timeout: 3 * time.Second, MemoryPages: 64, AllowedHosts: []string{"127.0.0.1"}}
	max := maxHTTPBytes(lim)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		wait := func() {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		}
		switch r.URL.Path {
		case "/hello":
			fmt.Fprintf(w, "hello %s from %s", r.URL.Query().Get("who"), r.Method)
		case "/silent": // no response until the client gives up
			wait()
		case "/stall": // the first bytes of the body, then nothing
			w.Write([]byte("part"))
			w.(http.Flusher).Flush()
			wait()
		case "/big": // chunked: no length to refuse it by
			w.Write(make([]byte, 4096))
			w.(http.Flusher).Flush()
			w.Write(bytes.Repeat([]byte("x"), int(max)))
		case "/big-declared":
			w.Header().Set("Content-Length", fmt.Sprint(max+1))
			w.Write(bytes.Repeat([]byte("x"), int(max)+1))
		}
	}))
	defer srv.Close()
	defer close(release)

	m, err := testEngine.Load(context.Background(), "net", wasm, lim)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())

	refused := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	tests := []struct {
		name                 string
		url                  string
		connect, first, betw int // request-options, in ms; 0: unset
		text                 string
		isError              bool
		log                  string
	}{
		{"allowed", srv.URL + "/hello?who=w%C3%B6rld", 0, 0, 0, "200 hello wörld from GET", false, ""},
		{"allowed with every timeout", srv.URL + "/hello?who=x", 2000, 2000, 2000, "200 hello x from GET", false, ""},
		{"refused", refused + "/hello", 0, 0, 0, "HTTP-request-denied", true, "http request refused"},
		{"first-byte-timeout", srv.URL + "/silent", 0, 100, 0, "HTTP-response-timeout", true, "first-byte-timeout of 100ms passed"},
		{"between-bytes-timeout", srv.URL + "/stall", 0, 0, 100, "connection-read-timeout", true, "between-bytes-timeout of 100ms passed"},
		{"body over the limit", srv.URL + "/big", 0, 0, 0, fmt.Sprintf("HTTP-response-body-size: %d", max), true, "http response body over the limit"},
		{"declared body over the limit", srv.URL + "/big-declared", 0, 0, 0, fmt.Sprintf("HTTP-response-body-size: %d", max), true, "http response body over the limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			res, err := componentCall(t, m, "get", fmt.Sprintf(`{"url":%q,"connect-timeout-ms":%d,"first-byte-timeout-ms":%d,"between-bytes-timeout-ms":%d}`,
				tt.url, tt.connect, tt.first, tt.betw))
			if err != nil || res.IsError != tt.isError || len(res.Content) != 1 || res.Content[0].Text != tt.text {
				t.Errorf("got %+v, %v; want isError %v and %q", res, err, tt.isError, tt.text)
			}
			// The request-options timeout ended it, not the call's.
			if d := time.Since(start); d > lim.Timeout {
				t.Errorf("took %v, over the call's timeout %v", d, lim.Timeout)
			}
			if tt.log != "" && !testLogs.Contains(tt.log) {
				t.Errorf("no log line with %q", tt.log)
			}
		})
	}

	// Without request-options, the call's own timeout bounds the request.
	// Both end at the same instant, so the call's timeout ends the call,
	// or the guest sees the request's end first and answers with it.
	start := time.Now()
	res, err := componentCall(t, m, "get", `{"url":"`+srv.URL+`/silent","connect-timeout-ms":0,"first-byte-timeout-ms":0,"between-bytes-timeout-ms":0}`)
	var ce *CallError
	ended := errors.As(err, &ce) && ce.Kind == KindTimeout ||
		err == nil && res.IsError && len(res.Content) == 1 && res.Content[0].Text == "HTTP-response-timeout"
	if d := time.Since(start); !ended || d < lim.Timeout || d > lim.Timeout+5*time.Second {
		t.Errorf("silent server without options: %+v, %v after %v; want a timeout after %v", res, err, d, lim.Timeout)
	}
}

// TestComponentHTTPConsentRefusal: a destination may_request_hosts names
// that Consent refuses (a person denied it, or the question waits for an
// input_required round) is wasi:http's HTTP-request-denied, which the
// component returns as its own error: the call does not fail, and the
// instance stays.
func TestComponentHTTPConsentRefusal(t *testing.T) {
	wasm := componentWasm(t, "net")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") }))
	defer srv.Close()
	for _, answer := range []string{"a person denied it", "input required: the client is asked to answer this request and retry"} {
		t.Run(answer, func(t *testing.T) {
			c := &fakeConsent{err: errors.New(answer)}
			m, err := testEngine.Load(context.Background(), "net", wasm, Limits{Instances: 1, Timeout: 10 * time.Second, MayRequestHosts: []string{"127.0.0.1"}, Consent: c})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close(context.Background())
			for i := range 2 {
				res, err := componentCall(t, m, "get", `{"url":"`+srv.URL+`/x","connect-timeout-ms":0,"first-byte-timeout-ms":0,"between-bytes-timeout-ms":0}`)
				if err != nil || !res.IsError || len(res.Content) != 1 || res.Content[0].Text != "HTTP-request-denied" {
					t.Fatalf("call %d: got %+v, %v; want the component's HTTP-request-denied, not a failed call", i, res, err)
				}
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			if len(c.asked) != 2 {
				t.Errorf("Consent asked %d times; want 2", len(c.asked))
			}
		})
	}
}
