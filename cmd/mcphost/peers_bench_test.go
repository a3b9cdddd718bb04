package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// BenchmarkPeers measures tools/call throughput over real process stdio for
// three servers in interleaved rounds, and reports mcphost's ratio to each
// peer, serial and with 4 requests in flight:
//
//   - limit: a hand-written JSON-RPC loop answering with a constant (the
//     ceiling for any server over the same pipes);
//
//   - gosdk: the official MCP Go SDK serving a native echo tool;
//
//   - mcphost: `mcphost serve` with the Go-guest echo tool (timeouts on,
//     as always).
//
//     go test -run '^$' -bench Peers -benchtime 20000x ./cmd/mcphost
func BenchmarkPeers(b *testing.B) {
	bins := map[string][]string{
		"mcphost": {mcphostBinary(b), "serve", "--config", "testdata/bench/plugins.toml", "--no-watch", "--log-level", "error"},
		"limit":   {peerBinary(b, "limit")},
		"gosdk":   {peerBinary(b, "gosdk")},
	}
	for _, inflight := range []int{1, 4} {
		name := "serial"
		if inflight > 1 {
			name = fmt.Sprintf("inflight%d", inflight)
		}
		b.Run(name, func(b *testing.B) {
			rate := map[string]float64{}
			const rounds = 3
			for round := range rounds {
				for _, peer := range rotate([]string{"mcphost", "limit", "gosdk"}, round) {
					rate[peer] += callRate(b, bins[peer], b.N, inflight) / rounds
				}
			}
			for peer, r := range rate {
				b.ReportMetric(r, peer+"-calls/s")
			}
			b.ReportMetric(rate["mcphost"]/rate["limit"], "x-limit")
			b.ReportMetric(rate["mcphost"]/rate["gosdk"], "x-gosdk")
		})
	}
}

func rotate(s []string, n int) []string {
	n %= len(s)
	return append(append([]string(nil), s[n:]...), s[:n]...)
}

var peerBins sync.Map

// peerBinary builds testdata/peers/name once per test binary.
func peerBinary(b *testing.B, name string) string {
	b.Helper()
	if p, ok := peerBins.Load(name); ok {
		return p.(string)
	}
	out := filepath.Join(b.TempDir(), name)
	if msg, err := exec.Command("go", "build", "-o", out, "./testdata/peers/"+name).CombinedOutput(); err != nil {
		b.Fatalf("build %s: %v\n%s", name, err, msg)
	}
	// b.TempDir is removed when this sub-benchmark ends; keep a copy.
	keep := filepath.Join(os.TempDir(), fmt.Sprintf("mcphost-peer-%s-%d", name, os.Getpid()))
	data, err := os.ReadFile(out)
	if err != nil || os.WriteFile(keep, data, 0o700) != nil {
		b.Fatalf("keep %s: %v", name, err)
	}
	b.Cleanup(func() { os.Remove(keep) })
	peerBins.Store(name, keep)
	return keep
}

// callRate starts argv, makes n tools/call round trips of the echo tool
// with inflight requests outstanding, and returns calls per second.
func callRate(b *testing.B, argv []string, n, inflight int) float64 {
	b.Helper()
	w, r, stop := startPeer(b, 64<<10, argv...)
	defer stop()
	req := func(id int) []byte {
		return []byte(`{"jsonrpc":"2.0","id":` + fmt.Sprint(id) + `,"method":"tools/call","params":{"name":"wasm_echo","arguments":{"text":"hello world"}}}` + "\n")
	}
	run := func(n int) time.Duration {
		start := time.Now()
		sent := 0
		bw := bufio.NewWriter(w)
		for ; sent < min(inflight, n); sent++ {
			bw.Write(req(sent + 1))
		}
		bw.Flush()
		for done := 0; done < n; done++ {
			line := readResponse(b, r)
			if !bytes.Contains(line, []byte("hello world")) {
				b.Fatalf("%s: unexpected response %s", argv[0], line)
			}
			if sent < n {
				sent++
				if _, err := w.Write(req(sent)); err != nil {
					b.Fatal(err)
				}
			}
		}
		return time.Since(start)
	}
	run(200) // warm-up: pools, first-call paths
	return float64(n) / run(n).Seconds()
}

// BenchmarkEcho3MB is one tools/call round trip of a 3 MB text through the
// Go-guest echo tool over `mcphost serve`'s stdio.
//
//	go test -run '^$' -bench Echo3MB -benchtime 20x ./cmd/mcphost
func BenchmarkEcho3MB(b *testing.B) {
	w, r, stop := startPeer(b, 1<<20, mcphostBinary(b), "serve", "--config", "testdata/bench/plugins.toml", "--no-watch", "--log-level", "error")
	defer stop()
	text := bytes.Repeat([]byte("x"), 3<<20)
	req := append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wasm_echo","arguments":{"text":"`), text...), `"}}}`+"\n"...)
	call := func() {
		if _, err := w.Write(req); err != nil {
			b.Fatal(err)
		}
		if line := readResponse(b, r); len(line) < len(text) || bytes.Contains(line[:min(len(line), 200)], []byte(`"error"`)) {
			b.Fatalf("response of %d bytes: %.200s", len(line), line)
		}
	}
	call() // warm-up
	b.ReportAllocs()
	b.SetBytes(int64(len(req)))
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		t0 := time.Now()
		call()
		lat = append(lat, time.Since(t0))
	}
	reportLatency(b, lat)
}

// BenchmarkRSS reports the resident memory of `mcphost serve` with the
// root plugins.toml (warm caches) after 100 tools/call round trips.
//
//	go test -run '^$' -bench RSS -benchtime 1x ./cmd/mcphost
func BenchmarkRSS(b *testing.B) {
	bin := mcphostBinary(b)
	root, _ := filepath.Abs("../..")
	cache := b.TempDir()
	startOnce(b, bin, root, cache) // fill the caches
	for b.Loop() {
		cmd := exec.Command(bin, "serve", "--no-watch", "--log-level", "error")
		cmd.Dir = root
		gocache, _ := goEnv("GOCACHE")
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache, "GOCACHE="+gocache)
		w, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		r := bufio.NewReader(out)
		handshake(b, w, r)
		for i := range 100 {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"hash_sha256","arguments":{"text":"hello %d"}}}`+"\n", i+10, i)
			if line := readResponse(b, r); !bytes.Contains(line, []byte(`"result"`)) {
				b.Fatalf("call: %s", line)
			}
		}
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
		w.Close()
		cmd.Wait()
		if err != nil {
			b.Skip("no /proc: ", err)
		}
		var kb float64
		for _, l := range bytes.Split(status, []byte("\n")) {
			if bytes.HasPrefix(l, []byte("VmRSS:")) {
				fmt.Sscan(string(bytes.TrimPrefix(l, []byte("VmRSS:"))), &kb)
			}
		}
		b.ReportMetric(kb/1024, "RSS-MB")
	}
}

// startPeer starts argv, completes the MCP handshake over its stdio and
// returns its ends; stop closes stdin and waits for the process.
func startPeer(b *testing.B, bufSize int, argv ...string) (w io.WriteCloser, r *bufio.Reader, stop func()) {
	b.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	w, _ = cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	r = bufio.NewReaderSize(out, bufSize)
	handshake(b, w, r)
	return w, r, func() { w.Close(); cmd.Wait() }
}
