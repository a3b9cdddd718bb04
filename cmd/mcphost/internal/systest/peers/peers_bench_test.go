package peers

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/mcphost/mcphost/internal/benchstat"
	ckit "github.com/mcphost/mcphost/sdk-guest/c"
)

// BenchmarkPeers measures tools/call throughput over real process stdio:
// mcphost's Go-guest echo tool ("go") and, when clang and wasi-libc are
// installed, the C kit's template tool ("c"), against peers run in the
// same invocation (see peers_test.go): the hand-written "limit", go-sdk
// ("gosdk") and mark3labs/mcp-go ("mcpgo"); beside "c", "limit-c", the
// limit answering the bytes the C tool answers, which divides c's
// figures (and before-c's) only. Every server runs as
// its own process for the whole benchmark; rounds interleave them in a
// rotating order and each figure is the median over the rounds, so the
// noise of a shared machine mostly cancels.
//
// Sub-benchmarks are Peers/<client>/<in flight>:
//
//   - client real behaves like the SDK clients: a reader goroutine decodes
//     every message with encoding/json and hands each response to its
//     caller over a channel; callers encode their requests with
//     encoding/json. client light is one goroutine writing pre-built lines
//     and matching responses with bytes.Contains, the least a client can
//     do.
//   - serial is one call in flight; inflight4 is four callers at once.
//
// Metrics: "calls/s:<server>" (median of the rounds) and
// "x:<server>/<peer>" (median of the per-round ratios); beside them each
// server's CPU per call, "cpu-µs/call:<server>", and its ratios,
// "cpu-x:<server>/<other>" (see cpuMeter).
// scripts/bench.sh turns them into docs/performance.md.
//
// client http is the HTTP workload of peers_http_bench_test.go:
// Peers/http/session and Peers/http/stateless, 50 virtual users against
// gosdk, mcpgo, go and c over Streamable HTTP, with each server's peak
// RSS.
//
// mcphost and the peers are built as scripts/release.sh builds (see
// releaseBuild). -peers.baseline names another mcphost binary (an older
// build, built the same way for its memory to compare) to measure beside
// this one as "before-go" and "before-c":
//
//	CGO_ENABLED=0 go build -tags grpcnotrace -trimpath -ldflags '-s -w' -o /tmp/old/mcphost ./cmd/mcphost  # in the old tree
//	go test -run '^$' -bench Peers -benchtime 20000x ./cmd/mcphost -peers.baseline /tmp/old/mcphost
func BenchmarkPeers(b *testing.B) {
	var clients []string
	switch *peersClient {
	case "all":
		clients = []string{"real", "light", "http"}
	case "both":
		clients = []string{"real", "light"}
	case "real", "light", "http":
		clients = []string{*peersClient}
	default:
		b.Fatalf("-peers.client=%q: want real, light, both (real and light), http or all", *peersClient)
	}
	for _, client := range clients {
		if client == "http" {
			b.Run("http", func(b *testing.B) {
				for _, form := range []string{"session", "stateless"} {
					b.Run(form, func(b *testing.B) { httpRounds(b, startHTTPServers(b, form), form) })
				}
			})
			continue
		}
		b.Run(client, func(b *testing.B) {
			servers := startBenchServers(b)
			if client == "real" {
				for _, s := range servers {
					s.real = newRealClient(s)
				}
			}
			for _, inflight := range []int{1, 4} {
				name := "serial"
				if inflight > 1 {
					name = fmt.Sprintf("inflight%d", inflight)
				}
				b.Run(name, func(b *testing.B) { peerRounds(b, servers, client, inflight) })
			}
		})
	}
}

var (
	peersClient     = flag.String("peers.client", "all", "BenchmarkPeers: the client, real (SDK-like over stdio), light, both (real and light), http (the HTTP workload) or all")
	peersBaseline   = flag.String("peers.baseline", "", "BenchmarkPeers: an older mcphost binary to measure as before-go and before-c")
	peersRounds     = flag.Int("peers.rounds", 5, "BenchmarkPeers: interleaved rounds per stdio figure")
	peersHTTPRounds = flag.Int("peers.http-rounds", 5, "BenchmarkPeers: interleaved rounds per HTTP figure (each -peers.http-time long)")
	peersOnly       = flag.String("peers.only", "", "BenchmarkPeers: a regexp; only the servers whose names match run (limit, gosdk, mcpgo, go, c, limit-c, before-go, before-c)")
)

// benchPeers are the servers every mcphost figure is divided by.
var benchPeers = []string{"limit", "gosdk", "mcpgo"}

// startBenchServers starts every server of the benchmark, stopped when b
// ends.
func startBenchServers(b *testing.B) []*benchServer {
	var servers []*benchServer
	for _, name := range benchPeers {
		if !benchServerWanted(b, name) {
			continue
		}
		servers = append(servers, startBenchServer(b, name, peerCommand(b, name), "wasm_echo"))
	}
	cConfig, cTool := cKitConfig(b)
	for _, m := range []struct{ prefix, bin string }{{"", benchBinary(b)}, {"before-", *peersBaseline}} {
		if m.bin == "" {
			continue
		}
		serve := func(config string) *exec.Cmd {
			return exec.Command(m.bin, "serve", "--no-watch", "--log-level", "error", "--config", config)
		}
		// As in the HTTP workload, compiled code is in the cache before
		// the measured server starts: a first start serves on the
		// interpreter while it compiles, which would land in the rounds.
		if benchServerWanted(b, m.prefix+"go") {
			fillCodeCache(b, m.bin, "testdata/bench/plugins.toml", "wasm_echo")
			servers = append(servers, startBenchServer(b, m.prefix+"go", serve("testdata/bench/plugins.toml"), "wasm_echo"))
		}
		if cConfig != "" && benchServerWanted(b, m.prefix+"c") {
			fillCodeCache(b, m.bin, cConfig, cTool)
			c := startBenchServer(b, m.prefix+"c", serve(cConfig), cTool)
			servers = append(servers, c)
			if !slices.ContainsFunc(servers, func(s *benchServer) bool { return s.name == "limit-c" }) && benchServerWanted(b, "limit-c") {
				servers = append(servers, startBenchServer(b, "limit-c", limitCommand(c.result(b)), cTool))
			}
		}
	}
	for _, s := range servers {
		b.Cleanup(s.stop)
	}
	return servers
}

// benchServerWanted reports whether -peers.only lets the server named
// name run.
func benchServerWanted(tb testing.TB, name string) bool {
	if *peersOnly == "" {
		return true
	}
	re, err := regexp.Compile(*peersOnly)
	if err != nil {
		tb.Fatalf("-peers.only: %v", err)
	}
	return re.MatchString(name)
}

// cKitConfig builds the C kit's `mcphost new` template (its measure
// tool validates its input and output against schemas) and returns its
// plugins.toml and tool name, or "" when clang or wasi-libc is missing,
// which it logs.
func cKitConfig(b testing.TB) (config, tool string) {
	if _, err := exec.LookPath("clang"); err != nil {
		b.Logf("no C-kit figures: clang is not installed (scripts/kit-deps.sh installs it)")
		return "", ""
	}
	dir := b.TempDir()
	if err := ckit.Write(dir, "kc"); err != nil {
		b.Fatal(err)
	}
	build := ckit.BuildCommand()
	cmd := exec.Command(build[0], build[1:]...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Logf("no C-kit figures: %s: %v\n%s", strings.Join(build, " "), err, out)
		return "", ""
	}
	// The bench serves the built module with --no-watch; the template's
	// build and watch keys go, so that a baseline binary older than
	// them reads the same file.
	config = filepath.Join(dir, "plugins.toml")
	text, err := os.ReadFile(config)
	if err != nil {
		b.Fatal(err)
	}
	var kept []string
	for _, l := range strings.Split(string(text), "\n") {
		if k := strings.TrimSpace(l); !strings.HasPrefix(k, "build") && !strings.HasPrefix(k, "watch") {
			kept = append(kept, l)
		}
	}
	if err := os.WriteFile(config, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
		b.Fatal(err)
	}
	return config, "kc_measure"
}

// peerRounds measures every server in interleaved rounds of b.N calls and
// reports the medians.
func peerRounds(b *testing.B, servers []*benchServer, client string, inflight int) {
	run := func(s *benchServer, n int) time.Duration {
		start := time.Now()
		var err error
		if client == "real" {
			err = s.real.run(n, inflight)
		} else {
			err = s.lightRun(n, inflight)
		}
		if err != nil {
			b.Fatalf("%s: %v", s.name, err)
		}
		return time.Since(start)
	}
	for _, s := range servers {
		run(s, 500) // warm-up: pools, first-call paths, caches
	}
	rounds := max(1, *peersRounds)
	rates := map[string][]float64{}
	cpu := newCPUMeter("call")
	for round := range rounds {
		for _, s := range rotate(servers, round) {
			cpu.measure(s.name, s.cmd.Process.Pid, func() int {
				rates[s.name] = append(rates[s.name], float64(b.N)/run(s, b.N).Seconds())
				return b.N
			})
		}
	}
	for _, s := range servers {
		b.ReportMetric(benchstat.Median(rates[s.name]), "calls/s:"+s.name)
	}
	names := make([]string, len(servers))
	peers := slices.Clone(benchPeers)
	for i, s := range servers {
		names[i] = s.name
		if strings.HasPrefix(s.name, "limit-") {
			peers = append(peers, s.name)
		}
	}
	reportRatios(b, names, peers, rates)
	cpu.report(b, names, peers)
}

// reportRatios reports "x:<server>/<peer>", the median of the per-round
// ratios of rates, for every server not in peers against every peer that
// may divide it (see mayDivide) and against its before- baseline when one
// ran.
func reportRatios(b *testing.B, servers, peers []string, rates map[string][]float64) {
	for _, m := range servers {
		if slices.Contains(peers, m) {
			continue
		}
		divisors := peers
		if !strings.HasPrefix(m, "before-") {
			divisors = append(slices.Clone(peers), "before-"+m)
		}
		for _, p := range divisors {
			if rates[p] == nil || !mayDivide(m, p) {
				continue
			}
			ratios := make([]float64, len(rates[m]))
			for i := range ratios {
				ratios[i] = rates[m][i] / rates[p][i]
			}
			b.ReportMetric(benchstat.Median(ratios), "x:"+m+"/"+p)
		}
	}
}

// mayDivide reports whether the figures of o, a peer or another server,
// divide those of server s: a limit answering one server's answer
// (limit-X) divides only X and before-X; every other one divides all.
func mayDivide(s, o string) bool {
	x, ok := strings.CutPrefix(o, "limit-")
	return !ok || strings.TrimPrefix(s, "before-") == x
}

func rotate[T any](s []T, n int) []T {
	n %= len(s)
	return append(append([]T(nil), s[n:]...), s[:n]...)
}

// benchServer is one server process of BenchmarkPeers after the
// handshake. Either lightRun reads its stdout or, once made, its real
// client's reader does.
type benchServer struct {
	name string
	tool string
	want string // in every good response's text
	cmd  *exec.Cmd
	w    io.WriteCloser
	r    *bufio.Reader
	real *realClient // nil for the light client
}

// startBenchServer starts cmd, a server of tool, and makes the MCP
// handshake.
func startBenchServer(tb testing.TB, name string, cmd *exec.Cmd, tool string) *benchServer {
	tb.Helper()
	s := &benchServer{name: name, tool: tool, want: "hello world", cmd: cmd}
	if strings.HasSuffix(tool, "_measure") {
		s.want = `\"words\":2`
	}
	s.w, _ = s.cmd.StdinPipe()
	out, _ := s.cmd.StdoutPipe()
	s.cmd.Stderr = os.Stderr
	if err := s.cmd.Start(); err != nil {
		tb.Fatalf("%s: %v", name, err)
	}
	s.r = bufio.NewReaderSize(out, 64<<10)
	fmt.Fprintln(s.w, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	if line, err := s.r.ReadBytes('\n'); err != nil || !bytes.Contains(line, []byte(`"result"`)) {
		s.stop()
		tb.Fatalf("%s: initialize: %s %v", name, line, err)
	}
	fmt.Fprintln(s.w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return s
}

// result makes one tools/call before any client reads the server's
// output and returns the call's result as sent.
func (s *benchServer) result(tb testing.TB) string {
	tb.Helper()
	fmt.Fprintln(s.w, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+s.tool+`","arguments":{"text":"hello world"}}}`)
	for {
		line, err := s.r.ReadBytes('\n')
		if err != nil {
			tb.Fatalf("%s: tools/call: %v", s.name, err)
		}
		var msg rpcResponse
		if err := json.Unmarshal(line, &msg); err != nil {
			tb.Fatalf("%s: tools/call: %s: %v", s.name, line, err)
		}
		if msg.ID == nil || msg.Method != "" {
			continue // a notification or a server→client request
		}
		if *msg.ID != 1 || msg.Result == nil {
			tb.Fatalf("%s: tools/call: %s", s.name, line)
		}
		return string(msg.Result)
	}
}

// stop ends the server: EOF on its stdin, then its exit.
func (s *benchServer) stop() {
	s.w.Close()
	s.cmd.Wait()
}

// lightRun makes n calls with inflight outstanding the light way: one
// goroutine writes pre-built lines and reads each response with
// bytes.Contains, writing the next request as each answer arrives.
func (s *benchServer) lightRun(n, inflight int) error {
	req := func(id int) []byte {
		return []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"` + s.tool + `","arguments":{"text":"hello world"}}}` + "\n")
	}
	bw := bufio.NewWriter(s.w)
	sent := 0
	for ; sent < min(inflight, n); sent++ {
		bw.Write(req(sent + 1))
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	want := []byte(s.want)
	for done := 0; done < n; done++ {
		line, err := s.r.ReadBytes('\n')
		if err != nil {
			return err
		}
		if bytes.Contains(line, []byte(`"method"`)) {
			done-- // a notification
			continue
		}
		if !bytes.Contains(line, want) {
			return fmt.Errorf("unexpected response %s", line)
		}
		if sent < n {
			sent++
			if _, err := s.w.Write(req(sent)); err != nil {
				return err
			}
		}
	}
	return nil
}

// realClient calls tools the way the SDK clients do: callers encode each
// request with encoding/json and write it under a lock; one reader
// goroutine decodes every incoming message with encoding/json and hands a
// response to the caller waiting for its id over a channel; the caller
// then decodes the result.
type realClient struct {
	s       *benchServer
	wmu     sync.Mutex
	mu      sync.Mutex
	pending map[int64]chan rpcResponse
	nextID  atomic.Int64
	gone    chan struct{} // closed when the reader ends
	err     error         // why the reader ended, read after gone
}

type rpcRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type rpcResponse struct {
	ID     *int64          `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

type callToolParams struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

type callToolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent map[string]any `json:"structuredContent"`
	IsError           bool           `json:"isError"`
}

// newRealClient starts the client's reader, which ends with the server's
// stdout.
func newRealClient(s *benchServer) *realClient {
	c := &realClient{s: s, pending: map[int64]chan rpcResponse{}, gone: make(chan struct{})}
	go c.read()
	return c
}

func (c *realClient) read() {
	defer close(c.gone)
	for {
		line, err := c.s.r.ReadBytes('\n')
		if err != nil {
			c.err = err
			return
		}
		var msg rpcResponse
		if err := json.Unmarshal(line, &msg); err != nil {
			c.err = fmt.Errorf("decode %s: %w", line, err)
			return
		}
		if msg.ID == nil || msg.Method != "" {
			continue // a notification or a server→client request
		}
		c.mu.Lock()
		ch := c.pending[*msg.ID]
		delete(c.pending, *msg.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- msg
		}
	}
}

// call makes one tools/call and checks its result.
func (c *realClient) call() error {
	id := c.nextID.Add(1)
	ch := make(chan rpcResponse, 1)
	c.mu.Lock()
	c.pending[id] = ch
	c.mu.Unlock()
	msg, err := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: id, Method: "tools/call",
		Params: callToolParams{Name: c.s.tool, Arguments: map[string]any{"text": "hello world"}}})
	if err != nil {
		return err
	}
	c.wmu.Lock()
	_, err = c.s.w.Write(append(msg, '\n'))
	c.wmu.Unlock()
	if err != nil {
		return err
	}
	var resp rpcResponse
	select {
	case resp = <-ch:
	case <-c.gone:
		return fmt.Errorf("reader ended: %v", c.err)
	}
	if resp.Error != nil {
		return fmt.Errorf("error response %s", resp.Error)
	}
	var res callToolResult
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		return err
	}
	if res.IsError || len(res.Content) != 1 || !strings.Contains(strconv.Quote(res.Content[0].Text), c.s.want) {
		return fmt.Errorf("unexpected result %s", resp.Result)
	}
	return nil
}

// run makes n calls from inflight callers at once.
func (c *realClient) run(n, inflight int) error {
	var left atomic.Int64
	left.Store(int64(n))
	errs := make(chan error, inflight)
	for range inflight {
		go func() {
			for left.Add(-1) >= 0 {
				if err := c.call(); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	var first error
	for range inflight {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// BenchmarkEcho3MB is one tools/call round trip of a 3 MB text through the
// Go-guest echo tool over `mcphost serve`'s stdio. With -peers.baseline,
// the older build serves the same calls, alternating with this one, and
// its median is reported as "p50-µs:before" beside "x:p50/before" (this
// build's median ÷ the older one's: below 1 is faster).
//
//	go test -run '^$' -bench Echo3MB -benchtime 20x ./cmd/mcphost
func BenchmarkEcho3MB(b *testing.B) {
	text := bytes.Repeat([]byte("x"), 3<<20)
	req := append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"wasm_echo","arguments":{"text":"`), text...), `"}}}`+"\n"...)
	type server struct {
		w   io.WriteCloser
		r   *bufio.Reader
		lat []time.Duration
	}
	var servers []*server
	for _, bin := range []string{systest.Binary(b), *peersBaseline} {
		if bin == "" {
			continue
		}
		w, r, stop := startPeer(b, 1<<20, bin, "serve", "--config", "testdata/bench/plugins.toml", "--no-watch", "--log-level", "error")
		defer stop()
		servers = append(servers, &server{w: w, r: r, lat: make([]time.Duration, 0, b.N)})
	}
	call := func(s *server) time.Duration {
		t0 := time.Now()
		if _, err := s.w.Write(req); err != nil {
			b.Fatal(err)
		}
		if line := readResponse(b, s.r); len(line) < len(text) || bytes.Contains(line[:min(len(line), 200)], []byte(`"error"`)) {
			b.Fatalf("response of %d bytes: %.200s", len(line), line)
		}
		return time.Since(t0)
	}
	for _, s := range servers {
		call(s) // warm-up
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(req)))
	for b.Loop() {
		for _, s := range servers {
			s.lat = append(s.lat, call(s))
		}
	}
	reportLatency(b, servers[0].lat)
	if len(servers) > 1 {
		before := servers[1].lat
		slices.Sort(before)
		b.ReportMetric(float64(before[len(before)/2].Microseconds()), "p50-µs:before")
		b.ReportMetric(float64(servers[0].lat[len(servers[0].lat)/2])/float64(before[len(before)/2]), "x:p50/before")
	}
}

// BenchmarkRSS reports the resident memory of `mcphost serve` with the
// root plugins.toml (warm caches) after 100 tools/call round trips.
//
//	go test -run '^$' -bench RSS -benchtime 1x ./cmd/mcphost
func BenchmarkRSS(b *testing.B) {
	bin := benchBinary(b)
	root, _ := filepath.Abs("../..")
	cache := b.TempDir()
	startOnce(b, bin, root, cache) // fill the caches
	for b.Loop() {
		cmd := exec.Command(bin, "serve", "--no-watch", "--log-level", "error")
		cmd.Dir = root
		gocache, _ := systest.GoEnv("GOCACHE")
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

// cpuMeter records each server's CPU per call over the rounds: the user
// and system time of its process (every thread, from /proc/PID/stat)
// across a round, divided by the calls the round made. Wall-clock rates
// move with a shared machine's load; CPU per call moves much less, and
// says which server does more work for the same call.
type cpuMeter struct {
	unit     string // "call" or "iter"
	per      map[string][]float64
	shortest map[string]time.Duration // the least CPU a round of the server used
	failed   error                    // why a reading failed, if one did; reported once
}

// cpuRoundMin is the least CPU a round must use for its CPU per call to
// mean something: /proc/PID/stat counts in ticks of 10 ms.
const cpuRoundMin = 100 * time.Millisecond

func newCPUMeter(unit string) *cpuMeter {
	return &cpuMeter{unit: unit, per: map[string][]float64{}, shortest: map[string]time.Duration{}}
}

// measure runs round, which returns how many calls it made, and records
// the CPU per call of process pid under name.
func (m *cpuMeter) measure(name string, pid int, round func() int) {
	before, err0 := procCPU(pid)
	calls := round()
	after, err1 := procCPU(pid)
	if err := cmp.Or(err0, err1); err != nil || calls == 0 {
		if m.failed == nil {
			m.failed = fmt.Errorf("%s: %d calls: %v", name, calls, err)
		}
		return
	}
	if least, ok := m.shortest[name]; !ok || after-before < least {
		m.shortest[name] = after - before
	}
	m.per[name] = append(m.per[name], float64(after-before)/float64(time.Microsecond)/float64(calls))
}

// report reports "cpu-µs/<unit>:<server>", the median over the rounds,
// and "cpu-x:<server>/<other>", the median of the per-round ratios of
// CPU per call (below 1 is cheaper than the other), of every server not
// in peers against every peer and every server after it in names; and
// logs them in one line. A server whose rounds used too little CPU to
// measure (cpuRoundMin) is left out, and the log says so.
func (m *cpuMeter) report(b *testing.B, all, peers []string) {
	if m.failed != nil {
		b.Logf("no CPU per %s figures: %v (they need Linux's /proc)", m.unit, m.failed)
		return
	}
	var names, short []string
	for _, n := range all {
		if m.shortest[n] < cpuRoundMin {
			short = append(short, fmt.Sprintf("%s (%v)", n, m.shortest[n]))
			continue
		}
		names = append(names, n)
	}
	if len(short) > 0 && b.N > 1 { // not the framework's first run of one call
		b.Logf("no CPU per %s figures for %s: a round used less CPU than the %v that /proc's 10 ms ticks need; make more calls a round (-benchtime)", m.unit, strings.Join(short, ", "), cpuRoundMin)
	}
	if len(names) == 0 {
		return
	}
	var line []string
	for _, n := range names {
		med := benchstat.Median(m.per[n])
		b.ReportMetric(med, "cpu-µs/"+m.unit+":"+n)
		line = append(line, fmt.Sprintf("%s %.1f", n, med))
	}
	for i, s := range names {
		if slices.Contains(peers, s) {
			continue
		}
		for _, o := range names {
			if o == s || !slices.Contains(peers, o) && slices.Index(names, o) < i || !mayDivide(s, o) {
				continue
			}
			ratios := make([]float64, len(m.per[s]))
			for r := range ratios {
				ratios[r] = m.per[s][r] / m.per[o][r]
			}
			med := benchstat.Median(ratios)
			b.ReportMetric(med, "cpu-x:"+s+"/"+o)
			line = append(line, fmt.Sprintf("%s÷%s %.2f", s, o, med))
		}
	}
	b.Logf("server CPU µs per %s (median of %d rounds) and ratios: %s", m.unit, len(m.per[names[0]]), strings.Join(line, ", "))
}

// clockTicks is Linux's USER_HZ, the unit of /proc/PID/stat's times,
// fixed at 100 for user space.
const clockTicks = 100

// procCPU is the user and system time process pid has used so far, all
// its threads, from /proc/PID/stat.
func procCPU(pid int) (time.Duration, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	ticks, err := statCPUTicks(stat)
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// statCPUTicks is utime+stime (fields 14 and 15) of a /proc/PID/stat
// line. The command name, field 2, is in parentheses and may hold spaces
// and parentheses itself, so fields are counted after its last ')'.
func statCPUTicks(stat []byte) (uint64, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("no ')' closing the command name")
	}
	f := strings.Fields(string(stat[i+1:])) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields after the command name; want at least 13", len(f))
	}
	utime, err := strconv.ParseUint(f[11], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("utime: %w", err)
	}
	stime, err := strconv.ParseUint(f[12], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stime: %w", err)
	}
	return utime + stime, nil
}
