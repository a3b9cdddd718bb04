package peers

import (
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
)

// Benchmarks of hot reload as a client sees it: from a file being replaced
// to notifications/tools/list_changed arriving at the official SDK client
// of a real `mcphost serve` (over stdio). Each iteration is one reload, so
// ask for enough of them for a p99:
//
//	go test -run '^$' -bench 'ReloadWasm' -benchtime 200x ./cmd/mcphost
//	go test -run '^$' -bench 'ReloadGoSource' -benchtime 10x ./cmd/mcphost
//
// Reported: the median and p99 latency, and the median beyond the
// debounce (the time the watcher waits for the files to go quiet, which is
// part of every reload by design).

const benchDebounce = 100 * time.Millisecond

// reportLatencies reports the median and p99 of lat in milliseconds.
func reportLatencies(b *testing.B, lat []time.Duration) {
	b.Helper()
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	med := lat[len(lat)/2]
	p99 := lat[min(len(lat)-1, len(lat)*99/100)]
	b.ReportMetric(ms(med), "ms-median")
	b.ReportMetric(ms(p99), "ms-p99")
	b.ReportMetric(ms(med-benchDebounce), "ms-median-beyond-debounce")
	b.ReportMetric(ms(p99-benchDebounce), "ms-p99-beyond-debounce")
	b.ReportMetric(0, "ns/op") // one op is one reload; the latencies say it better
}

// BenchmarkReloadWasm replaces a .wasm (by rename, as editors and build
// tools do) with one of two versions whose compiled code is cached, and
// waits for tools/list_changed.
func BenchmarkReloadWasm(b *testing.B) {
	e := systest.StartReload(b, "--watch-debounce", benchDebounce.String())
	versions := [][]byte{
		systest.WasmPlugin("v0", []string{"even"}, nil, nil),
		systest.WasmPlugin("v1", []string{"odd"}, nil, nil),
	}
	e.Write(b, "p.wasm", versions[0])
	e.Write(b, "plugins.toml", []byte(systest.ReloadHeader+"\n[[plugin]]\nname = \"p\"\npath = \"p.wasm\"\n"))
	e.Expect(b, "plugin added", "tools/list_changed")
	e.Replace(b, "p.wasm", versions[1]) // both versions compiled and cached from here on
	e.Expect(b, "warm-up", "tools/list_changed")

	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		e.Replace(b, "p.wasm", versions[i%2])
		e.Expect(b, "replaced", "tools/list_changed")
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportLatencies(b, lat)
}

// BenchmarkReloadGoSource edits a Go-source plugin's main.go (a new tool
// name, so a real build every time) and waits for tools/list_changed:
// go build for wasip1, compile, instantiate, swap.
func BenchmarkReloadGoSource(b *testing.B) {
	e := systest.StartReload(b, "--watch-debounce", benchDebounce.String())
	e.Write(b, filepath.Join("src", "go.mod"), []byte("module example.com/reload\n\ngo 1.24\n"))
	nonce := time.Now().UnixNano() // defeats the build cache across runs
	e.Write(b, filepath.Join("src", "main.go"), []byte(systest.GoPlugin(fmt.Sprintf("t%d", nonce))))
	e.Write(b, "plugins.toml", []byte(systest.ReloadHeader+"\n[[plugin]]\nname = \"g\"\nsource = \"src\"\n"))
	e.Expect(b, "plugin added", "tools/list_changed")

	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		start := time.Now()
		e.Replace(b, filepath.Join("src", "main.go"), []byte(systest.GoPlugin(fmt.Sprintf("t%d_%d", nonce, i))))
		e.Expect(b, "main.go edited", "tools/list_changed")
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	reportLatencies(b, lat)
}
