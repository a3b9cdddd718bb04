package peers

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/cli"
	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/stdio"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
)

// Benchmarks of tools/call round trips over real stdio (OS pipes), with a
// Wasm echo tool and with a native in-process handler of the same tool (the
// limit of the stack around the plugin), run in the same process so the
// ratio cancels the machine's noise:
//
//	go test -run '^$' -bench 'Stdio' -benchtime 20000x ./cmd/mcphost

// stdioServer serves cfg in-process over two OS pipes and returns the
// client's ends.
func stdioServer(b *testing.B, cfg *config.Config) (w io.WriteCloser, r *bufio.Reader) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	g, closeRT, err := cli.Build(ctx, log, cfg)
	if err != nil {
		b.Fatal(err)
	}
	if len(g.Failures) > 0 {
		b.Fatalf("build: %v", g.Failures)
	}
	reg := plugins.NewRegistry()
	reg.Swap(ctx, g)
	srv := host.New(reg, host.Options{Logger: log})
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = stdio.Serve(ctx, srv, inR, outW)
	}()
	b.Cleanup(func() {
		inW.Close()
		<-done
		cancel()
		srv.Close()
		reg.Close(context.Background())
		closeRT(context.Background())
		inR.Close()
		outR.Close()
		outW.Close()
	})
	r = bufio.NewReaderSize(outR, 64<<10)
	handshake(b, inW, r)
	return inW, r
}

func handshake(b *testing.B, w io.Writer, r *bufio.Reader) {
	b.Helper()
	fmt.Fprintln(w, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	if line, err := r.ReadBytes('\n'); err != nil || !bytes.Contains(line, []byte(`"result"`)) {
		b.Fatalf("initialize: %s %v", line, err)
	}
	fmt.Fprintln(w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// roundTrips makes b.N sequential tools/call round trips of tool and
// reports calls/s, p50 and p99.
func roundTrips(b *testing.B, w io.Writer, r *bufio.Reader, tool string) {
	b.Helper()
	lat := make([]time.Duration, 0, b.N)
	req := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"text":"hello world"}}}` + "\n")
	// Warm the instance pool and the first-call paths.
	for range 50 {
		w.Write(req)
		readResponse(b, r)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := w.Write(req); err != nil {
			b.Fatal(err)
		}
		line := readResponse(b, r)
		lat = append(lat, time.Since(t0))
		if !bytes.Contains(line, []byte("hello world")) {
			b.Fatalf("unexpected response %s", line)
		}
	}
	b.StopTimer()
	reportLatency(b, lat)
}

// readResponse returns the next response line, skipping notifications
// (list_changed arrives when the initial load lands).
func readResponse(b *testing.B, r *bufio.Reader) []byte {
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			b.Fatal(err)
		}
		if !bytes.Contains(line, []byte(`"method"`)) {
			return line
		}
	}
}

func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	var total time.Duration
	for _, d := range lat {
		total += d
	}
	b.ReportMetric(float64(len(lat))/total.Seconds(), "calls/s")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

func benchConfig(b *testing.B) *config.Config {
	b.Helper()
	cfg, err := config.LoadConfig("testdata/bench/plugins.toml")
	if err != nil {
		b.Fatal(err)
	}
	cfg.Plugins = append(cfg.Plugins, config.Spec{Name: "native", Native: systest.NativeEcho("Returns the given text unchanged.")})
	return cfg
}

// BenchmarkStdioCall compares the Wasm echo tool with the native handler
// over the same in-process stdio stack, and reports wasm/native as a ratio
// from interleaved rounds run in this process.
func BenchmarkStdioCall(b *testing.B) {
	cfg := benchConfig(b)
	w, r := stdioServer(b, cfg)
	b.Run("native", func(b *testing.B) { roundTrips(b, w, r, "native_echo") })
	b.Run("wasm", func(b *testing.B) { roundTrips(b, w, r, "wasm_echo") })
	b.Run("ratio", func(b *testing.B) {
		// Interleave short rounds so both see the same machine load.
		var native, wasm time.Duration
		const round = 200
		req := func(tool string) []byte {
			return []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"text":"hello world"}}}` + "\n")
		}
		rn, rw := req("native_echo"), req("wasm_echo")
		for i := 0; i < b.N; i += round {
			for _, c := range []struct {
				req []byte
				acc *time.Duration
			}{{rn, &native}, {rw, &wasm}} {
				t0 := time.Now()
				for range round {
					w.Write(c.req)
					readResponse(b, r)
				}
				*c.acc += time.Since(t0)
			}
		}
		b.ReportMetric(float64(wasm)/float64(native), "wasm/native")
	})
}

// BenchmarkStdioSubprocess measures the real `mcphost serve` binary over
// its process stdio with the Wasm echo tool.
func BenchmarkStdioSubprocess(b *testing.B) {
	w, r, stop := startPeer(b, 64<<10, systest.Binary(b), "serve", "--config", "testdata/bench/plugins.toml", "--no-watch", "--log-level", "error")
	defer stop()
	roundTrips(b, w, r, "wasm_echo")
}

// BenchmarkStartup measures process start → initialize answered, and
// process start → first tools/list answered (which waits for the examples
// to load), for the root plugins.toml, with a cold and a warm cache.
//
//	go test -run '^$' -bench Startup -benchtime 3x ./cmd/mcphost
func BenchmarkStartup(b *testing.B) {
	bin := systest.Binary(b)
	root, _ := filepath.Abs("../..")
	for _, mode := range []string{"cold", "warm-build-cold-compile", "warm"} {
		b.Run(mode, func(b *testing.B) {
			var initTotal, listTotal time.Duration
			cache := b.TempDir()
			if mode != "cold" {
				startOnce(b, bin, root, cache) // fill the cache
			}
			for range b.N {
				if mode == "cold" {
					cache = b.TempDir()
				}
				if mode == "warm-build-cold-compile" {
					os.RemoveAll(filepath.Join(cache, "mcphost", "wazero"))
				}
				ti, tl := startOnce(b, bin, root, cache)
				initTotal += ti
				listTotal += tl
			}
			b.ReportMetric(float64(initTotal.Milliseconds())/float64(b.N), "ms-to-initialize")
			b.ReportMetric(float64(listTotal.Milliseconds())/float64(b.N), "ms-to-tools")
		})
	}
}

func startOnce(b *testing.B, bin, root, cache string) (toInit, toList time.Duration) {
	b.Helper()
	cmd := exec.Command(bin, "serve", "--no-watch", "--log-level", "error")
	cmd.Dir = root
	// Only mcphost's caches (Go-source builds, wazero compilations) move
	// with XDG_CACHE_HOME; Go's own build cache stays where it is.
	gocache, _ := systest.GoEnv("GOCACHE")
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache, "GOCACHE="+gocache)
	w, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { w.Close(); cmd.Wait() }()
	r := bufio.NewReader(out)
	handshake(b, w, r)
	toInit = time.Since(start)
	fmt.Fprintln(w, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if line := readResponse(b, r); !bytes.Contains(line, []byte(`"result":{"tools"`)) {
		b.Fatalf("tools/list: %s", line)
	}
	return toInit, time.Since(start)
}

// lastOut is an Outbound that hands each message over a channel.
type lastOut struct{ sent chan []byte }

func (o *lastOut) Send(msg []byte, _ json.RawMessage) error {
	o.sent <- append([]byte(nil), msg...)
	return nil
}

// BenchmarkCallInProcess is the server's whole cost of one tools/call,
// from the request line given to Conn.Handle, through the session's queue
// and a worker, to the response handed to the transport: no pipes. The
// Wasm echo against the native one separates the sandbox and guest from
// the host. Two more plugins join when their files are set:
// $MCPHOST_BENCH_BASELINE_GUEST (the echo example built by an earlier
// SDK: baseline_echo) and $MCPHOST_BENCH_C_GUEST (a C-kit template:
// c_measure).
//
//	go test -run '^$' -bench CallInProcess -benchtime 20000x ./cmd/mcphost
func BenchmarkCallInProcess(b *testing.B) {
	cfg := benchConfig(b)
	tools := []struct{ name, want string }{{"native_echo", `"hello world"`}, {"wasm_echo", `"hello world"`}}
	for _, v := range []struct{ plugin, env, tool, want string }{
		{"baseline", "MCPHOST_BENCH_BASELINE_GUEST", "baseline_echo", `"hello world"`},
		{"c", "MCPHOST_BENCH_C_GUEST", "c_measure", `"words":2`},
	} {
		path := os.Getenv(v.env)
		if path == "" {
			continue
		}
		spec := cfg.Plugins[0] // the Wasm echo, with the defaults filled in
		spec.Name, spec.Path, spec.Source = v.plugin, path, ""
		cfg.Plugins = append(cfg.Plugins, spec)
		tools = append(tools, struct{ name, want string }{v.tool, v.want})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	g, closeRT, err := cli.Build(ctx, log, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer closeRT(context.Background())
	if len(g.Failures) > 0 {
		b.Fatalf("build: %v", g.Failures)
	}
	reg := plugins.NewRegistry()
	reg.Swap(ctx, g)
	defer reg.Close(context.Background())
	srv := host.New(reg, host.Options{Logger: log})
	defer srv.Close()
	out := &lastOut{sent: make(chan []byte, 1)}
	c := srv.Connect(out, host.ConnInfo{ID: "bench"})
	defer c.Close()
	c.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}`))
	<-out.sent
	c.Handle(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	caller := func(tb testing.TB, tool string, want []byte) func() {
		line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"text":"hello world"}}}`)
		return func() {
			c.Handle(ctx, append([]byte(nil), line...))
			if last := <-out.sent; !bytes.Contains(last, want) {
				tb.Fatalf("response %s", last)
			}
		}
	}
	for _, tool := range tools {
		b.Run(tool.name, func(b *testing.B) {
			call := caller(b, tool.name, []byte(tool.want))
			for range 50 {
				call()
			}
			b.ReportAllocs()
			for b.Loop() {
				call()
			}
		})
	}
	// Every tool in interleaved rounds, so all see the same load: each
	// one's p50 and its ratio to wasm_echo's.
	b.Run("p50", func(b *testing.B) {
		took := make([][]time.Duration, len(tools))
		calls := make([]func(), len(tools))
		for j, tool := range tools {
			calls[j] = caller(b, tool.name, []byte(tool.want))
		}
		const round = 100
		for i := 0; i < b.N; i += round {
			for j, call := range calls {
				for range round {
					t0 := time.Now()
					call()
					took[j] = append(took[j], time.Since(t0))
				}
			}
		}
		p50 := make([]float64, len(tools))
		for j, tool := range tools {
			slices.Sort(took[j])
			p50[j] = float64(took[j][len(took[j])/2]) / float64(time.Microsecond)
			b.ReportMetric(p50[j], tool.name+"-µs")
		}
		for j, tool := range tools {
			if j != 1 {
				b.ReportMetric(p50[j]/p50[1], tool.name+"/wasm_echo")
			}
		}
	})
}
