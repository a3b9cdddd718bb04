package sandbox

import (
	"context"
	"runtime"
	"testing"
)

var benchInput = []byte(`{"op":"echo","msg":"hello"}`)

func BenchmarkCallEcho(b *testing.B) {
	m := load(b, Limits{Instances: 1})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Call(ctx, "echo", benchInput); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCallEchoParallel(b *testing.B) {
	m := load(b, Limits{Instances: runtime.NumCPU()})
	warmAll(b, m, runtime.NumCPU())
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := m.Call(ctx, "echo", benchInput); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkIdleInstanceMemory reports the Go heap held by one warm, idle
// instance (B/instance): guest and kernel linear memory plus go-sdk and
// wazero bookkeeping. The measurement does not depend on b.N; the timed
// loop only reads Stats.
func BenchmarkIdleInstanceMemory(b *testing.B) {
	const n = 8
	m := load(b, Limits{Instances: n})
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapInuse
	}
	before := heap() // one warm instance, from Load
	warmAll(b, m, n)
	after := heap()
	if s := m.Stats(); s.Idle != n {
		b.Fatalf("idle instances: got %d; want %d", s.Idle, n)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = m.Stats()
	}
	// After the loop: resetting the timer would drop the metric.
	b.ReportMetric(float64(int64(after)-int64(before))/float64(n-1), "B/instance")
}
