package peers

import (
	"bytes"
	"testing"
	"time"
)

// BenchmarkEchoInProcess is one tools/call round trip of a large text
// through the Go-guest echo tool over the in-process stdio stack (the
// same server as `mcphost serve`, without the process boundary), so a CPU
// profile covers host, plugins, sandbox and guest together:
//
//	go test -run '^$' -bench EchoInProcess -benchtime 5x -cpuprofile cpu.out ./cmd/mcphost
func BenchmarkEchoInProcess(b *testing.B) {
	cfg := benchConfig(b)
	for i := range cfg.Plugins {
		cfg.Plugins[i].Timeout = 5 * time.Minute
	}
	w, r := stdioServer(b, cfg)
	for _, size := range []struct {
		name string
		n    int
	}{{"1MB", 1 << 20}, {"3MB", 3 << 20}} {
		b.Run(size.name, func(b *testing.B) {
			text := bytes.Repeat([]byte("x"), size.n)
			req := append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wasm_echo","arguments":{"text":"`), text...), `"}}}`+"\n"...)
			call := func() {
				if _, err := w.Write(req); err != nil {
					b.Fatal(err)
				}
				if line := readResponse(b, r); len(line) < len(text) || bytes.Contains(line[:min(len(line), 200)], []byte(`"error"`)) {
					b.Fatalf("response of %d bytes: %.200s", len(line), line)
				}
			}
			call()
			b.ReportAllocs()
			b.SetBytes(int64(len(req)))
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t0 := time.Now()
				call()
				lat = append(lat, time.Since(t0))
			}
			reportLatency(b, lat)
		})
	}
}
