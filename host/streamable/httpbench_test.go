package streamable

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
)

// BenchmarkHTTPCall measures tools/call round trips over Streamable HTTP
// on loopback against the native echo plugin (the one BenchmarkStdioCall
// uses): each client has its own session and keep-alive connection and
// sends one POST after the other; "clients=8" runs eight at once. Every
// answer is application/json (the echo tool emits nothing before its
// result). Allocations include the client side.
//
// The baseline sub-benchmarks run the same clients against a plain
// net/http handler (read the body, pick out id and arguments, call the same
// echo export, write the response), so the ratio shows the transport's and
// the server's own cost over net/http's on this machine at this moment.
func BenchmarkHTTPCall(b *testing.B) {
	for _, server := range []string{"server", "baseline"} {
		for _, clients := range []int{1, 8} {
			b.Run(fmt.Sprintf("%s/clients=%d", server, clients), func(b *testing.B) {
				benchHTTP(b, server == "baseline", clients)
			})
		}
	}
}

func benchHTTP(b *testing.B, baseline bool, clients int) {
	var handler http.Handler
	if baseline {
		handler = plainHTTP()
	} else {
		srv := host.New(loadRegistry(b, nil, "echo"), host.Options{Logger: quietLog})
		defer srv.Close()
		h := NewHandler(srv, Options{})
		defer h.Close()
		handler = h
	}
	ts := httptest.NewServer(handler)
	defer ts.Close()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}}
	defer hc.CloseIdleConnections()
	url := ts.URL + "/mcp"
	sessions := make([]string, clients)
	for i := range sessions {
		sessions[i] = benchInitialize(b, hc, url)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	b.ReportAllocs()
	b.ResetTimer()
	for _, sid := range sessions {
		wg.Go(func() {
			var body []byte
			want := []byte(`hello world`)
			for {
				i := next.Add(1)
				if i > int64(b.N) {
					return
				}
				body = append(body[:0], `{"jsonrpc":"2.0","id":`...)
				body = strconv.AppendInt(body, i, 10)
				body = append(body, `,"method":"tools/call","params":{"name":"echo_echo","arguments":{"msg":"hello world"}}}`...)
				resp, err := benchPost(hc, url, sid, body)
				if err != nil || !bytes.Contains(resp, want) {
					errs <- fmt.Errorf("call %d: %v %s", i, err, resp)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

// plainHTTP is the baseline: the least an HTTP server must do per call.
func plainHTTP() http.Handler {
	call := echoExports()[abi.ExportCallTool]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		id := jsonrpc.Member(body, "id")
		if jsonrpc.Member(body, "method") == nil || id == nil {
			w.Header().Set("Mcp-Session-Id", "baseline")
			w.WriteHeader(http.StatusAccepted)
			return
		}
		env := append([]byte(`{"request":{"name":"echo","arguments":`), jsonrpc.Member(jsonrpc.Member(body, "params"), "arguments")...)
		env = append(env, `},"context":{}}`...)
		res, err := call(r.Context(), env)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		resp := jsonrpc.AppendResponse(nil, id, res)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Mcp-Session-Id", "baseline")
		w.Write(resp)
	})
}

func benchInitialize(b *testing.B, hc *http.Client, url string) string {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if _, err := benchPost(hc, url, sid, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		b.Fatal(err)
	}
	return sid
}

func benchPost(hc *http.Client, url, sid string, body []byte) ([]byte, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}
