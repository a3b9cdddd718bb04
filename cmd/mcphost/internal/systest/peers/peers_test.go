package peers

import (
	"bufio"
	"cmp"
	"encoding/json"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
)

// The peers BenchmarkPeers measures mcphost against. Each is an echo tool
// named wasm_echo:
//
//   - limit: a hand-written JSON-RPC loop answering with a constant, the
//     echo's answer, the ceiling for any server over the same pipes; it
//     runs as this test binary started again with peerEnv naming it;
//   - limit-c, beside the C kit's tool: the same loop answering with the
//     bytes the C tool answers (limitResultEnv), so that dividing by it
//     weighs the servers alone: a client spends more decoding the C
//     tool's structured answer than "hello world", which dividing by
//     limit would charge to the server;
//   - gosdk: the official MCP Go SDK, mcp.AddTool with a typed handler;
//   - mcpgo: mark3labs/mcp-go, what a Go author would pick instead of a
//     plugin, s.AddTool with request.RequireString.
//
// gosdk and mcpgo are the program internal/tools/benchpeer, built once
// per test binary so that a peer's RSS is its own; it serves stdio, or
// Streamable HTTP with -addr.
const peerEnv = "MCPHOST_BENCH_PEER"

// limitResultEnv, when set, is the result the limit answers every call
// with (JSON); unset, it answers the echo's "hello world".
const limitResultEnv = "MCPHOST_BENCH_LIMIT_RESULT"

// echoResult is the result of the echo tools' calls, and the limit's.
const echoResult = `{"content":[{"type":"text","text":"hello world"}]}`

func TestMain(m *testing.M) {
	if name := os.Getenv(peerEnv); name != "" {
		if name != "limit" {
			log.Fatalf("%s=%q: no such peer", peerEnv, name)
		}
		result := cmp.Or(os.Getenv(limitResultEnv), echoResult)
		if !json.Valid([]byte(result)) || strings.ContainsAny(result, "\r\n") {
			log.Fatalf("%s: not one line of JSON: %q", limitResultEnv, result)
		}
		serveLimit(result)
		os.Exit(0)
	}
	os.Exit(systest.Main(m))
}

// peerCommand is the command that serves the peer called name, with args
// for internal/tools/benchpeer.
func peerCommand(tb testing.TB, name string, args ...string) *exec.Cmd {
	if name == "limit" {
		return limitCommand(echoResult)
	}
	return exec.Command(peerBinary(tb), append([]string{"-sdk", name}, args...)...)
}

// limitCommand is the command that serves the limit answering every call
// with result.
func limitCommand(result string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), peerEnv+"=limit", limitResultEnv+"="+result)
	return cmd
}

// peerBinary builds internal/tools/benchpeer once per test binary, as
// releaseBuild does, in the tools module: the SDKs' servers stay out of
// mcphost's go.mod.
func peerBinary(tb testing.TB) string {
	return peerBuild.path(tb, filepath.Join("..", "..", "internal", "tools"), "./benchpeer")
}

// benchBinary builds cmd/mcphost once per test binary as releaseBuild
// does, for the benchmarks that compare it with its peers or report its
// memory: they measure the binary that ships.
func benchBinary(tb testing.TB) string { return benchBuild.path(tb, "", ".") }

var peerBuild, benchBuild releaseOnce

// releaseOnce is a package built by releaseBuild once per test binary.
type releaseOnce struct {
	once sync.Once
	bin  string
	err  error
}

func (r *releaseOnce) path(tb testing.TB, dir, pkg string) string {
	tb.Helper()
	r.once.Do(func() { r.bin, r.err = releaseBuild(dir, pkg) })
	if r.err != nil {
		tb.Fatalf("building %s: %v", pkg, r.err)
	}
	return r.bin
}

// releaseBuild builds pkg, of the module in dir ("": this one), into a
// new temporary directory with scripts/release.sh's flags (no cgo,
// -trimpath, no symbol table or DWARF, the tags of releaseTags) and
// returns the executable's path. The flags change how many of the
// executable's pages a process keeps resident, which is much of mcphost's
// peak RSS (see exeRSS), so peers are built the same way.
func releaseBuild(dir, pkg string) (string, error) {
	tmp, err := systest.TempDir("mcphost-bench")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(tmp, "bin")
	cmd := releaseBuildCommand(pkg, bin, "")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", &systest.BuildErr{Err: err, Out: out}
	}
	return bin, nil
}

// releaseTags are the build tags scripts/release.sh builds with:
// grpcnotrace leaves out golang.org/x/net/trace, which gRPC (linked for
// its types by OTLP and Rekor, never run) would otherwise bring with its
// html/template pages, whose reflective method calls keep every exported
// method of every linked type in the binary (TestReleaseBuildDropsMethods).
const releaseTags = "grpcnotrace"

// releaseBuildCommand is the go build of pkg into bin with
// scripts/release.sh's flags, plus extraLdflags.
func releaseBuildCommand(pkg, bin, extraLdflags string) *exec.Cmd {
	cmd := exec.Command("go", "build", "-tags", releaseTags, "-trimpath", "-ldflags", strings.TrimSpace("-s -w "+extraLdflags), "-o", bin, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	return cmd
}

// serveLimit answers each request on stdin with result, and initialize
// with its own capabilities, until EOF.
func serveLimit(result string) {
	r := bufio.NewReaderSize(os.Stdin, 64<<10)
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &req) != nil || req.ID == nil {
			continue
		}
		w.WriteString(`{"jsonrpc":"2.0","id":`)
		w.Write(req.ID)
		if req.Method == "initialize" {
			w.WriteString(`,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"limit","version":"1"}}}` + "\n")
		} else {
			w.WriteString(`,"result":`)
			w.WriteString(result)
			w.WriteString("}\n")
		}
		if r.Buffered() == 0 {
			w.Flush()
		}
	}
}

// TestPeers checks that every peer of BenchmarkPeers answers the echo call
// through the benchmark's real-like client, so the benchmark cannot go
// stale unnoticed.
func TestPeers(t *testing.T) {
	for _, name := range benchPeers {
		t.Run(name, func(t *testing.T) {
			p := startBenchServer(t, name, peerCommand(t, name), "wasm_echo")
			defer p.stop()
			c := newRealClient(p)
			for i := range 3 {
				if err := c.call(); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
		})
	}
}

// TestLimitAnswers checks that the limit answers what it is given, the
// way limit-c is started with the C tool's answer, and what the echo
// answers otherwise, through the helper that takes limit-c's answer from
// the C tool.
func TestLimitAnswers(t *testing.T) {
	structured := `{"content":[{"type":"text","text":"{\"bytes\":11,\"words\":2,\"lines\":1}"}],"structuredContent":{"bytes":11,"words":2,"lines":1}}`
	for _, tc := range []struct{ name, result, tool string }{
		{"echo", echoResult, "wasm_echo"},
		{"structured", structured, "c_measure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startBenchServer(t, "limit-"+tc.name, limitCommand(tc.result), tc.tool)
			defer p.stop()
			if got := p.result(t); got != tc.result {
				t.Fatalf("result = %s; want %s", got, tc.result)
			}
			if err := newRealClient(p).call(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestMayDivide checks which peers divide which server's figures: a
// limit answering one server's answer divides only that server and its
// baseline.
func TestMayDivide(t *testing.T) {
	for _, tc := range []struct {
		s, o string
		want bool
	}{
		{"c", "limit", true},
		{"c", "mcpgo", true},
		{"c", "limit-c", true},
		{"before-c", "limit-c", true},
		{"go", "limit-c", false},
		{"before-go", "limit-c", false},
		{"go", "before-go", true},
	} {
		if got := mayDivide(tc.s, tc.o); got != tc.want {
			t.Errorf("mayDivide(%q, %q) = %v; want %v", tc.s, tc.o, got, tc.want)
		}
	}
}

// TestStatCPUTicks checks the /proc/PID/stat reading behind
// BenchmarkPeers' CPU per call, including command names that hold the
// separators themselves.
func TestStatCPUTicks(t *testing.T) {
	const tail = " S 1 2 3 4 5 6 7 8 9 10 250 30 0 0 20 0 9 0 100"
	tests := []struct {
		name, stat string
		want       uint64
		fails      bool
	}{
		{"plain", "42 (mcphost)" + tail, 280, false},
		{"spaces and parentheses in the name", "42 (a) b (c) d)" + tail, 280, false},
		{"no closing parenthesis", "42 (mcphost" + tail, 0, true},
		{"cut short", "42 (mcphost) S 1 2 3", 0, true},
		{"not a number", "42 (mcphost) S 1 2 3 4 5 6 7 8 9 10 x 30", 0, true},
	}
	for _, tc := range tests {
		got, err := statCPUTicks([]byte(tc.stat))
		if (err != nil) != tc.fails || got != tc.want {
			t.Errorf("%s: statCPUTicks = %d, %v; want %d, failing %v", tc.name, got, err, tc.want, tc.fails)
		}
	}
}

// TestProcCPU checks that procCPU sees this process's own CPU time grow
// while it works, and never past the wall-clock time times the cores.
func TestProcCPU(t *testing.T) {
	pid := os.Getpid()
	before, err := procCPU(pid)
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	start := time.Now()
	var after time.Duration
	for sum := uint64(0); after < before+50*time.Millisecond && time.Since(start) < time.Minute; {
		for i := range uint64(1 << 20) {
			sum += i * i
		}
		if after, err = procCPU(pid); err != nil || sum == 0 {
			t.Fatal(err)
		}
	}
	wall := time.Since(start)
	if used := after - before; used < 50*time.Millisecond || used > wall*time.Duration(runtime.NumCPU())+20*time.Millisecond {
		t.Errorf("procCPU grew by %v in %v of work on %d cores; want at least 50ms and at most the wall time times the cores", used, wall, runtime.NumCPU())
	}
}
