package wasmrun

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"

	"github.com/mcphost/mcphost/abi"
)

var builds struct {
	mu   sync.Mutex
	dir  string
	done map[string]*build // by absolute package directory
}

type build struct {
	once sync.Once
	path string
	err  error
}

// Build compiles the Go main package in dir as a wasip1 reactor and
// returns the path of the .wasm file. Each package is built once per test
// binary, and different packages may be built in parallel; call Cleanup
// from TestMain to remove the files.
func Build(t testing.TB, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	builds.mu.Lock()
	if builds.dir == "" {
		if builds.dir, err = os.MkdirTemp("", "wasmrun-"); err != nil {
			builds.mu.Unlock()
			t.Fatal(err)
		}
		builds.done = map[string]*build{}
	}
	b, ok := builds.done[abs]
	if !ok {
		b = &build{path: filepath.Join(builds.dir, fmt.Sprintf("%d-%s.wasm", len(builds.done), filepath.Base(abs)))}
		builds.done[abs] = b
	}
	builds.mu.Unlock()
	b.once.Do(func() {
		cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", b.path, ".")
		cmd.Dir = abs
		cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared in %s: %v\n%s", dir, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Cleanup removes the modules Build made.
func Cleanup() {
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
	}
	builds.dir, builds.done = "", nil
}

// Options configure a loaded plugin.
type Options struct {
	Config       map[string]string
	AllowedHosts []string
	AllowedPaths map[string]string // host path → guest path
	Timeout      time.Duration     // 0 means none
	MaxPages     uint32            // memory limit in 64 KiB pages; 0 means none
	// Replies answers host functions that return something; the default
	// reply is none (0), but for abi.HostHTTP, which makes the request
	// when its host is one of AllowedHosts, exactly, and replies a refusal
	// otherwise (a stand-in for mcphost's egress rules).
	Replies map[string]func(payload []byte) []byte
}

// HostCall records one call of a host function.
type HostCall struct {
	Name    string
	Payload []byte
	At      time.Time
}

// Plugin is one loaded instance.
type Plugin struct {
	p      *extism.Plugin
	stderr *syncBuffer

	mu    sync.Mutex
	calls []HostCall
}

var cache = wazero.NewCompilationCache()

// Load instantiates the module at path with real clocks and randomness.
func Load(t testing.TB, path string, opts Options) *Plugin {
	t.Helper()
	wasm, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pl := &Plugin{stderr: &syncBuffer{}}
	var fns []extism.HostFunction
	for _, hf := range abi.HostFuncs {
		name, hf := hf.Name, hf
		reply := opts.Replies[name]
		if reply == nil && name == abi.HostHTTP {
			reply = func(payload []byte) []byte { return serveHTTP(opts.AllowedHosts, payload) }
		}
		f := extism.NewHostFunctionWithStack(name, func(ctx context.Context, cp *extism.CurrentPlugin, stack []uint64) {
			var payload []byte
			if hf.Payload && stack[0] != 0 {
				b, err := cp.ReadBytes(stack[0])
				if err != nil {
					panic(err)
				}
				payload = append([]byte(nil), b...)
				_ = cp.Free(stack[0])
			}
			pl.mu.Lock()
			pl.calls = append(pl.calls, HostCall{Name: name, Payload: payload, At: time.Now()})
			pl.mu.Unlock()
			if !hf.Reply {
				return
			}
			stack[0] = 0
			if reply != nil {
				if r := reply(payload); r != nil {
					off, err := cp.WriteBytes(r)
					if err != nil {
						panic(err)
					}
					stack[0] = off
				}
			}
		}, types(hf.Payload), types(hf.Reply))
		f.SetNamespace(abi.HostNamespace)
		fns = append(fns, f)
	}
	fns = append(fns, bulkUnsupported()...)
	fns = append(fns, neverCancelled())
	m := extism.Manifest{
		Wasm:         []extism.Wasm{extism.WasmData{Data: wasm}},
		Config:       opts.Config,
		AllowedHosts: opts.AllowedHosts,
		AllowedPaths: opts.AllowedPaths,
		Timeout:      uint64(opts.Timeout / time.Millisecond),
	}
	if opts.MaxPages > 0 {
		m.Memory = &extism.ManifestMemory{MaxPages: opts.MaxPages}
	}
	cfg := extism.PluginConfig{
		EnableWasi:    true,
		RuntimeConfig: wazero.NewRuntimeConfig().WithCompilationCache(cache).WithCloseOnContextDone(opts.Timeout > 0),
		ModuleConfig: wazero.NewModuleConfig().WithSysWalltime().WithSysNanotime().WithSysNanosleep().
			WithRandSource(rand.Reader).WithStderr(pl.stderr),
		EnableHttpResponseHeaders: true,
	}
	p, err := extism.NewPlugin(context.Background(), m, cfg, fns)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	p.SetLogger(func(extism.LogLevel, string) {})
	t.Cleanup(func() { p.Close(context.Background()) })
	pl.p = p
	return pl
}

// Call runs export with input.
func (p *Plugin) Call(export string, input []byte) (rc uint32, out []byte, err error) {
	return p.p.Call(export, input)
}

// Has reports whether the module exports name.
func (p *Plugin) Has(name string) bool { return p.p.FunctionExists(name) }

// Calls returns the host-function calls so far.
func (p *Plugin) Calls() []HostCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]HostCall(nil), p.calls...)
}

// Stderr returns what the guest wrote to stderr.
func (p *Plugin) Stderr() string { return p.stderr.String() }

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// types is the signature half of a host function: one i64 or nothing.
func types(present bool) []extism.ValueType {
	if present {
		return []extism.ValueType{extism.ValueTypeI64}
	}
	return nil
}

// bulkUnsupported answers abi.IONamespace's functions as a host without
// them does ("not supported"), so guests take the 8-byte kernel path that
// every Extism host has; mcphost's own kernel is tested in sandbox.
func bulkUnsupported() []extism.HostFunction {
	i32, i64 := extism.ValueTypeI32, extism.ValueTypeI64
	const minus1i32, minus1i64 = uint64(0xffffffff), ^uint64(0)
	var fs []extism.HostFunction
	for _, f := range []struct {
		name            string
		params, results []extism.ValueType
		answer          uint64
	}{
		{abi.IORead, []extism.ValueType{i64, i32, i32}, []extism.ValueType{i32}, minus1i32},
		{abi.IOWrite, []extism.ValueType{i32, i32}, []extism.ValueType{i64}, 0},
		{abi.IOInput, []extism.ValueType{i32, i32}, []extism.ValueType{i64}, minus1i64},
		{abi.IOOutput, []extism.ValueType{i32, i32}, []extism.ValueType{i32}, minus1i32},
	} {
		h := extism.NewHostFunctionWithStack(f.name, func(_ context.Context, _ *extism.CurrentPlugin, s []uint64) {
			s[0] = f.answer
		}, f.params, f.results)
		h.SetNamespace(abi.IONamespace)
		fs = append(fs, h)
	}
	return fs
}

// serveHTTP answers abi.HostHTTP: the request when its host is one of
// allowed, a refusal otherwise, and every failure as {"error":…}.
func serveHTTP(allowed []string, payload []byte) []byte {
	var req abi.HTTPRequest
	rep := func() abi.HTTPReply {
		if err := json.Unmarshal(payload, &req); err != nil {
			return abi.HTTPReply{Error: err.Error()}
		}
		u, err := url.Parse(req.URL)
		if err != nil {
			return abi.HTTPReply{Error: err.Error()}
		}
		if !slices.Contains(allowed, u.Hostname()) {
			return abi.HTTPReply{Error: "host " + u.Hostname() + " is not allowed", Refused: true}
		}
		method := req.Method
		if method == "" {
			method = "GET"
		}
		hr, err := http.NewRequest(method, req.URL, bytes.NewReader(req.Body))
		if err != nil {
			return abi.HTTPReply{Error: err.Error()}
		}
		for k, v := range req.Headers {
			hr.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			return abi.HTTPReply{Error: err.Error()}
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return abi.HTTPReply{Error: err.Error()}
		}
		h := map[string]string{}
		for k, v := range resp.Header {
			h[strings.ToLower(k)] = strings.Join(v, ",")
		}
		return abi.HTTPReply{Status: resp.StatusCode, Headers: h, Body: body}
	}()
	b, _ := json.Marshal(rep)
	return b
}

// neverCancelled answers abi.CallCancelled as a host whose calls are
// never cancelled: 0. go-sdk has no grace to give a cancelled guest.
func neverCancelled() extism.HostFunction {
	f := extism.NewHostFunctionWithStack(abi.CallCancelled, func(_ context.Context, _ *extism.CurrentPlugin, s []uint64) {
		s[0] = 0
	}, nil, []extism.ValueType{extism.ValueTypeI32})
	f.SetNamespace(abi.CallNamespace)
	return f
}
