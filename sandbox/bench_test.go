package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/wasmgen"
	"github.com/mcphost/mcphost/sandbox/internal/extism"
	"github.com/mcphost/mcphost/sandbox/internal/looppoll"
)

var benchInput = []byte(`{"op":"echo","msg":"hello"}`)

func BenchmarkCallEcho(b *testing.B) {
	for _, rt := range []string{RuntimeNative, extismSDK} {
		b.Run(rt, func(b *testing.B) { benchCallEcho(b, rt) })
	}
}

func benchCallEcho(b *testing.B, rt string) {
	needGuest(b)
	m := loadOn(b, rt, guestWasm, Limits{Instances: 1})
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
	for _, rt := range []string{RuntimeNative, extismSDK} {
		b.Run(rt, func(b *testing.B) {
			m, err := testEngine.load(context.Background(), b.Name(), wasm, Limits{Instances: 1}, backendFor(rt))
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
	for _, rt := range []string{RuntimeNative, extismSDK} {
		b.Run(rt, func(b *testing.B) {
			needGuest(b)
			m := loadOn(b, rt, guestWasm, Limits{Instances: 1})
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
	for _, rt := range []string{RuntimeNative, extismSDK} {
		b.Run(rt, func(b *testing.B) {
			const n = 20
			m, err := testEngine.load(context.Background(), b.Name(), wasm, Limits{Instances: 1}, backendFor(rt))
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
				inst, err := m.newInstance(context.Background(), m.be)
				if err != nil {
					b.Fatal(err)
				}
				if _, _, err := inst.g.Call(context.Background(), "hello", nil); err != nil {
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

// BenchmarkTimeouts prices the two ways a native call's time budget is
// enforced, with the timeout on in both: wazero's close-on-done, which
// leaves native code at every loop iteration, and the loop poll
// (looppoll), which reads a global there. Guests: the WAT-size wasmgen
// module, the Go test guest's echo, and the echo example (a Go guest
// decoding and encoding JSON through sdk-guest).
func BenchmarkTimeouts(b *testing.B) {
	echoCall := []byte(`{"request":{"name":"echo","arguments":{"text":"hello world"}}}`)
	guests := []struct {
		name, export string
		wasm         func(testing.TB) []byte
		input        []byte
	}{
		{"wat", "hello", func(testing.TB) []byte { return wasmgen.Module(wasmgen.Func{Name: "hello", Output: "hello, world"}) }, benchInput},
		{"go-testguest", "echo", func(tb testing.TB) []byte { needGuest(tb); return guestWasm }, benchInput},
		{"go-echo-example", abi.ExportCallTool, echoExample, echoCall},
		// The same call in the envelope plugins sends, with its context.
		{"go-echo-envelope", abi.ExportCallTool, echoExample,
			[]byte(`{"context":{"id":1,"_meta":{"progressToken":"t"},"protocolVersion":"2025-11-25","plugin":"wasm"},"request":{"name":"echo","arguments":{"text":"hello world"}}}`)},
	}
	for _, g := range guests {
		for _, mode := range modes {
			b.Run(g.name+"/"+mode.name, func(b *testing.B) {
				m := loadMode(b, g.wasm(b), Limits{Instances: 1}, mode.intr)
				if polled(m) != (mode.intr == interruptPoll) {
					b.Fatal("not the mechanism asked for")
				}
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					if _, err := m.Call(ctx, g.export, g.input); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		// Both mechanisms in short interleaved rounds, so they see the same
		// machine load: the p50 of each and their ratio.
		b.Run(g.name+"/ratio", func(b *testing.B) {
			wasm := g.wasm(b)
			var ms [2]*Module
			var took [2][]time.Duration
			for i, mode := range modes {
				ms[i] = loadMode(b, wasm, Limits{Instances: 1}, mode.intr)
			}
			ctx := context.Background()
			const round = 100
			for i := 0; i < b.N; i += round {
				for j, m := range ms {
					for range round {
						t0 := time.Now()
						if _, err := m.Call(ctx, g.export, g.input); err != nil {
							b.Fatal(err)
						}
						took[j] = append(took[j], time.Since(t0))
					}
				}
			}
			p50 := func(d []time.Duration) float64 {
				slices.Sort(d)
				return float64(d[len(d)/2]) / float64(time.Microsecond)
			}
			poll, cod := p50(took[0]), p50(took[1])
			b.ReportMetric(poll, "p50-poll-µs")
			b.ReportMetric(cod, "p50-close-on-done-µs")
			b.ReportMetric(cod/poll, "close-on-done/poll")
		})
	}
}

// echoExample builds examples/echo once per test binary.
func echoExample(tb testing.TB) []byte {
	tb.Helper()
	return buildGuest(tb, echoExampleGuest)
}

// BenchmarkInstrument prices the load-time rewrite of a 3 MB Go guest
// (the echo example), and compiling it with wazero with and without the
// poll, without a cache: what a module's first load pays.
func BenchmarkInstrument(b *testing.B) {
	wasm := echoExample(b)
	b.Run("rewrite", func(b *testing.B) {
		var st looppoll.Stats
		var out []byte
		b.SetBytes(int64(len(wasm)))
		b.ReportAllocs()
		for b.Loop() {
			var err error
			if out, st, err = looppoll.Instrument(wasm); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(st.Loops), "loops")
		b.ReportMetric(float64(len(out)-len(wasm))/float64(len(wasm))*100, "%growth")
	})
	polled, _, err := looppoll.Instrument(wasm)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name        string
		wasm        []byte
		closeOnDone bool
	}{{"compile/close-on-done", wasm, true}, {"compile/poll", polled, false}} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCloseOnContextDone(c.closeOnDone))
				if _, err := rt.CompileModule(ctx, c.wasm); err != nil {
					b.Fatal(err)
				}
				rt.Close(ctx)
			}
		})
	}
}

// BenchmarkColdLoad prices what a saved Go plugin waits for: Load on an
// empty compilation cache up to the answer of its first call_tool, for a
// 3 MB Go guest (the echo example), on the interpreter
// (InterpretUntilCompiled) and on compiled code, interleaved in every
// iteration; for the interpreter also how long the compiled code took to
// take over (swap-ms) and what a call costs on each.
func BenchmarkColdLoad(b *testing.B) {
	wasm := echoExample(b)
	in := []byte(`{"request":{"name":"echo","arguments":{"text":"hello"}}}`)
	ctx := context.Background()
	root := b.TempDir()
	var n int
	var first, calls [2]time.Duration
	var swap time.Duration
	for b.Loop() {
		for i, interpret := range []bool{true, false} {
			dir, err := os.MkdirTemp(root, "cache-")
			if err != nil {
				b.Fatal(err)
			}
			e, err := NewEngine(ctx, EngineOptions{CacheDir: dir, Logger: testEngine.log, InterpretUntilCompiled: interpret})
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			m, err := e.load(ctx, "cold", wasm, Limits{InterpretFirst: interpret, Instances: 1}, nativeWith(interruptPoll))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := m.Call(ctx, abi.ExportCallTool, in); err != nil {
				b.Fatal(err)
			}
			first[i] += time.Since(start)
			if m.Stats().Interpreted != interpret {
				b.Fatalf("interpreted: got %v; want %v", !interpret, interpret)
			}
			t := time.Now()
			for range 20 {
				if _, err := m.Call(ctx, abi.ExportCallTool, in); err != nil {
					b.Fatal(err)
				}
			}
			calls[i] += time.Since(t) / 20
			if interpret {
				if err := e.waitCompiles(ctx); err != nil {
					b.Fatal(err)
				}
				swap += time.Since(start)
			}
			m.Close(ctx)
			e.Close(ctx)
		}
		n++
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(n) / 1e6 }
	b.ReportMetric(ms(first[0]), "interp-first-ms")
	b.ReportMetric(ms(first[1]), "compiled-first-ms")
	b.ReportMetric(float64(first[1])/float64(first[0]), "compiled/interp")
	b.ReportMetric(ms(swap), "swap-ms")
	b.ReportMetric(ms(calls[0])*1e3, "interp-call-µs")
	b.ReportMetric(ms(calls[1])*1e3, "compiled-call-µs")
	b.ReportMetric(0, "ns/op") // an iteration is two loads; the metrics above say what each cost
}

// envelopeOnly is a Caller without its frame exports: a Guest of it
// sends tool calls to call_tool's envelope.
type envelopeOnly struct{ Caller }

func (e envelopeOnly) HasExport(name string) bool {
	return name != abi.ExportCallToolFrame && name != abi.ExportCallToolMembers && e.Caller.HasExport(name)
}

// BenchmarkGoGuestCall prices a Go guest's tool call as plugins makes it
// (Guest.CallTool with a client request's context), in interleaved
// rounds so that every variant sees the same load: the echo example
// through its frame export (abi.ExportCallToolMembers) and through its
// call_tool envelope, and the bare boundary (a wasmgen export that does
// nothing but write its output). Two more join when their paths are set:
// $MCPHOST_BENCH_BASELINE_GUEST, the echo example built by an earlier
// SDK (envelope only), and $MCPHOST_BENCH_C_GUEST, a C-kit template's
// measure (through its envelope too, as c-envelope, when it exports the
// frame). It reports each one's p50 in µs, the frame's share above
// the boundary (mostly the guest's own work) and the ratios to the frame.
func BenchmarkGoGuestCall(b *testing.B) {
	ctx := context.Background()
	cc := abi.Context{ID: json.RawMessage(`1`), Meta: json.RawMessage(`{"progressToken":"t"}`), ProtocolVersion: "2025-11-25"}
	echo := ToolRef{Name: "echo"}
	args := json.RawMessage(`{"text":"hello world"}`)
	load := func(name string, wasm []byte) *Module {
		m, err := testEngine.load(ctx, b.Name()+"/"+name, wasm, Limits{Instances: 1}, nativeWith(interruptPoll))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { m.Close(ctx) })
		return m
	}
	guestOf := func(m *Module) Guest {
		g, err := NewGuest(m, "p")
		if err != nil {
			b.Fatal(err)
		}
		return g
	}
	call := func(g Guest, tool ToolRef) func() error {
		return func() error {
			r, err := g.CallTool(ctx, tool, args, cc)
			if err == nil && r.IsError {
				err = fmt.Errorf("tool error: %s", r.JSON)
			}
			return err
		}
	}
	m := load("echo", echoExample(b))
	frame := guestOf(m)
	if !m.HasExport(abi.ExportCallToolMembers) {
		b.Fatal("the echo example does not export " + abi.ExportCallToolMembers)
	}
	raw := load("boundary", wasmgen.Module(wasmgen.Func{Name: "hello", Output: "hello, world"}))
	variants := []struct {
		name string
		call func() error
	}{
		{"frame", call(frame, echo)},
		{"envelope", call(extism.NewV2(envelopeOnly{m}, "p", extismErrors), echo)},
		{"boundary", func() error { _, err := raw.Call(ctx, "hello", args); return err }},
	}
	for _, v := range []struct{ name, env, tool string }{
		{"baseline", "MCPHOST_BENCH_BASELINE_GUEST", "echo"},
		{"c", "MCPHOST_BENCH_C_GUEST", "measure"},
	} {
		path := os.Getenv(v.env)
		if path == "" {
			b.Logf("no %s variant: set $%s", v.name, v.env)
			continue
		}
		wasm, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		vm := load(v.name, wasm)
		variants = append(variants, struct {
			name string
			call func() error
		}{v.name, call(guestOf(vm), ToolRef{Name: v.tool})})
		if vm.HasExport(abi.ExportCallToolFrame) || vm.HasExport(abi.ExportCallToolMembers) {
			// The same guest through its call_tool envelope.
			variants = append(variants, struct {
				name string
				call func() error
			}{v.name + "-envelope", call(extism.NewV2(envelopeOnly{vm}, "p", extismErrors), ToolRef{Name: v.tool})})
		}
	}
	took := make([][]time.Duration, len(variants))
	const round = 100
	for i := 0; i < b.N; i += round {
		for j, v := range variants {
			for range round {
				t0 := time.Now()
				if err := v.call(); err != nil {
					b.Fatalf("%s: %v", v.name, err)
				}
				took[j] = append(took[j], time.Since(t0))
			}
		}
	}
	p50 := make(map[string]float64, len(variants))
	for j, v := range variants {
		slices.Sort(took[j])
		p50[v.name] = float64(took[j][len(took[j])/2]) / float64(time.Microsecond)
		b.ReportMetric(p50[v.name], "p50-"+v.name+"-µs")
	}
	b.ReportMetric(p50["frame"]-p50["boundary"], "frame-above-boundary-µs")
	for _, v := range variants[1:] {
		if v.name != "boundary" {
			b.ReportMetric(p50[v.name]/p50["frame"], v.name+"/frame")
		}
	}
}
