package sandbox

import (
	"bytes"
	"context"
	"runtime"
	"testing"

	"github.com/mcphost/mcphost/internal/wasmgen"
)

var benchInput = []byte(`{"op":"echo","msg":"hello"}`)

func BenchmarkCallEcho(b *testing.B) {
	for _, rt := range []string{RuntimeNative, RuntimeExtism} {
		b.Run(rt, func(b *testing.B) { benchCallEcho(b, rt) })
	}
}

func benchCallEcho(b *testing.B, rt string) {
	m := load(b, Limits{Instances: 1, Runtime: rt})
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

// BenchmarkBoundary prices the host's own per-call overhead: a tiny
// generated guest (wasmgen) whose export writes 12 bytes of output, on each
// runtime, with the module's timeout on as in production.
func BenchmarkBoundary(b *testing.B) {
	wasm := wasmgen.Module(wasmgen.Func{Name: "hello", Output: "hello, world"})
	for _, rt := range []string{RuntimeNative, RuntimeExtism} {
		b.Run(rt, func(b *testing.B) {
			m, err := testEngine.Load(context.Background(), b.Name(), wasm, Limits{Instances: 1, Runtime: rt})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close(context.Background())
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Call(ctx, "hello", benchInput); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEchoMiB moves 1 MiB in and out of the Go test guest, which
// reads and writes through input_load_u64 and store_u64.
func BenchmarkEchoMiB(b *testing.B) {
	in := bytes.Repeat([]byte("x"), 1<<20)
	for _, rt := range []string{RuntimeNative, RuntimeExtism} {
		b.Run(rt, func(b *testing.B) {
			m := load(b, Limits{Instances: 1, Runtime: rt})
			ctx := context.Background()
			b.ReportAllocs()
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				if _, err := m.Call(ctx, "echo", in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSmallInstanceMemory reports the Go heap one instance of a tiny
// generated guest (WAT-size, one 64 KiB page) holds after a call, on each
// runtime (B/instance).
func BenchmarkSmallInstanceMemory(b *testing.B) {
	wasm := wasmgen.Module(wasmgen.Func{Name: "hello", Output: "hello, world"})
	for _, rt := range []string{RuntimeNative, RuntimeExtism} {
		b.Run(rt, func(b *testing.B) {
			const n = 20
			m, err := testEngine.Load(context.Background(), b.Name(), wasm, Limits{Instances: 1, Runtime: rt})
			if err != nil {
				b.Fatal(err)
			}
			defer m.Close(context.Background())
			heap := func() uint64 {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				return ms.HeapInuse
			}
			insts := make([]*instance, 0, n)
			before := heap()
			for range n {
				inst, err := m.newInstance(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := inst.g.call(context.Background(), "hello", nil); err != nil {
					b.Fatal(err)
				}
				insts = append(insts, inst)
			}
			after := heap()
			b.ReportAllocs()
			for b.Loop() {
				_ = m.Stats()
			}
			b.ReportMetric(float64(int64(after)-int64(before))/n, "B/instance")
			for _, inst := range insts {
				inst.close()
			}
		})
	}
}
