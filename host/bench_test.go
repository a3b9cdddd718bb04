package host

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/host/internal/protocol"
)

// BenchmarkStdioCall measures sequential tools/call round trips over
// serveLines (stdio's framing and writes over the Conn seam) against the
// native echo plugin: the client writes one request line and reads its
// response before the next. Allocations include the
// client side. Compare with the ~55k calls/s plain hand-written loop of
// go-sdk-evaluation.md §3 (a subprocess over OS pipes).
//
// The baseline sub-benchmarks run the same client against a plain loop
// (read a line, pick out id and arguments, call the same echo export,
// write the response: no validation, no concurrency), so the ratio of the
// two shows the server's own cost on this machine at this moment.
func BenchmarkStdioCall(b *testing.B) {
	for _, srv := range []struct {
		name  string
		serve func(b *testing.B, in io.Reader, out io.Writer) error
	}{
		{"server", func(b *testing.B, in io.Reader, out io.Writer) error {
			srv := New(loadRegistry(b, nil, "echo"), Options{Logger: quietLog})
			defer srv.Close()
			return serveLines(context.Background(), srv, in, out, nil)
		}},
		{"baseline", func(_ *testing.B, in io.Reader, out io.Writer) error { return plainLoop(in, out) }},
	} {
		b.Run(srv.name+"/io.Pipe", func(b *testing.B) {
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			benchCalls(b, func(out io.Writer) error { return srv.serve(b, inR, out) }, inW, outR, outW)
		})
		b.Run(srv.name+"/os.Pipe", func(b *testing.B) {
			inR, inW, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			outR, outW, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			defer inR.Close()
			benchCalls(b, func(out io.Writer) error { return srv.serve(b, inR, out) }, inW, outR, outW)
		})
	}
}

// plainLoop is the baseline: the least a stdio server must do per call.
func plainLoop(in io.Reader, out io.Writer) error {
	call := echoExports()[abi.ExportCallTool]
	r := bufio.NewReader(in)
	var env, resp []byte
	for {
		line, err := r.ReadSlice('\n')
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if jsonrpc.Member(line, "method") == nil || jsonrpc.Member(line, "id") == nil {
			continue
		}
		env = append(env[:0], `{"request":{"name":"echo","arguments":`...)
		env = append(env, jsonrpc.Member(jsonrpc.Member(line, "params"), "arguments")...)
		env = append(env, `},"context":{}}`...)
		res, err := call(context.Background(), env)
		if err != nil {
			return err
		}
		resp = append(jsonrpc.AppendResponse(resp[:0], jsonrpc.Member(line, "id"), res), '\n')
		if _, err := out.Write(resp); err != nil {
			return err
		}
	}
}

func benchCalls(b *testing.B, serve func(out io.Writer) error, inW io.WriteCloser, outR io.Reader, outW io.WriteCloser) {
	done := make(chan error, 1)
	go func() {
		done <- serve(outW)
		outW.Close()
	}()
	r := bufio.NewReader(outR)
	roundTrip := func(line []byte) []byte {
		if _, err := inW.Write(line); err != nil {
			b.Fatal(err)
		}
		resp, err := r.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		return resp
	}
	roundTrip([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"))
	inW.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))

	var line []byte
	want := []byte(`hello world`)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		line = append(line[:0], `{"jsonrpc":"2.0","id":`...)
		line = strconv.AppendInt(line, int64(i+1), 10)
		line = append(line, `,"method":"tools/call","params":{"name":"echo_echo","arguments":{"msg":"hello world"}}}`+"\n"...)
		if resp := roundTrip(line); !bytes.Contains(resp, want) {
			b.Fatalf("unexpected response %s", resp)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
	inW.Close()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

// BenchmarkDecode measures the codec alone on a tools/call line.
func BenchmarkDecode(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo_echo","arguments":{"msg":"hello world"},"_meta":{"progressToken":3}}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := jsonrpc.Decode(line); err != nil {
			b.Fatal(err)
		}
	}
}

// signalOut is an Outbound that keeps the last message's length and
// signals each message.
type signalOut struct {
	n    atomic.Int64
	sent chan struct{}
}

func (o *signalOut) Send(msg []byte, _ json.RawMessage) error {
	o.n.Store(int64(len(msg)))
	o.sent <- struct{}{}
	return nil
}

// BenchmarkHandle is the host's whole cost of one tools/call of a native
// echo tool with no transport: from the line handed to Conn.Handle,
// through the session's queue and a worker, to the response handed to the
// Outbound.
//
//	go test -run '^$' -bench 'Handle$' -benchmem ./host
func BenchmarkHandle(b *testing.B) {
	srv := New(loadRegistry(b, nil, "echo"), Options{Logger: quietLog})
	defer srv.Close()
	out := &signalOut{sent: make(chan struct{}, 1)}
	c := srv.Connect(out, ConnInfo{ID: "bench"})
	defer c.Close()
	ctx := context.Background()
	c.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`))
	<-out.sent
	c.Handle(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo_echo","arguments":{"msg":"hello world"}}}`)
	b.ReportAllocs()
	for b.Loop() {
		c.Handle(ctx, append([]byte(nil), line...))
		<-out.sent
	}
	if out.n.Load() < 40 {
		b.Fatalf("last response %d bytes", out.n.Load())
	}
}

// TestToolOutcomeAllocs holds a successful call's outcome to the one
// allocation of boxing the result as a handler's any: the error
// inspection that a failure needs costs a call that did not fail nothing.
func TestToolOutcomeAllocs(t *testing.T) {
	out := json.RawMessage(`{"content":[{"type":"text","text":"{\"bytes\":11}"}],"structuredContent":{"bytes":11}}`)
	if res, err := toolOutcome(nil, nil, out, nil, protocol.Latest); err != nil || !bytes.Equal(res.(json.RawMessage), out) {
		t.Fatalf("toolOutcome = %s, %v; want the output unchanged", res, err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = toolOutcome(nil, nil, out, nil, protocol.Latest) }); n > 1 {
		t.Errorf("toolOutcome: %v allocations per success; want at most 1", n)
	}
}
