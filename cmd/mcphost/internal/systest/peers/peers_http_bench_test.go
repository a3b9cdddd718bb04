package peers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/benchstat"
)

// The HTTP workload of BenchmarkPeers, in the shape of the public TM Dev
// Lab MCP benchmark: httpUsers virtual users call one tool over
// Streamable HTTP on loopback, each iteration in one of two forms:
//
//   - session: POST initialize, POST notifications/initialized, POST one
//     tools/call, DELETE the session (a session per call);
//   - stateless: one POST of tools/call carrying the 2026-07-28
//     per-request _meta, no session (the peers run their SDK's stateless
//     option on /stateless, mcphost serves both forms on one endpoint).
//
// The servers are mcphost with the Go guest ("go") and the C guest ("c"),
// go-sdk ("gosdk") and mcp-go ("mcpgo"), each a process of its own per
// form, so that its peak RSS (VmHWM) is that form's. Rounds interleave
// them in a rotating order; each round runs -peers.http-iters iterations
// (b.N does not count: -benchtime 1x is enough), starting none after
// -peers.http-time. Metrics:
// "iters/s:<server>" and "x:<server>/<peer>" (medians, as over stdio) and
// "peakRSS-MB:<server>" read from /proc after the last round, with
// "exeRSS-MB:<server>", how much of the resident set is then the
// executable's own pages.
const httpUsers = 50

var (
	peersHTTPIters = flag.Int("peers.http-iters", 3000, "BenchmarkPeers: HTTP iterations per server and round")
	peersHTTPTime  = flag.Duration("peers.http-time", 10*time.Second, "BenchmarkPeers: an HTTP round starts no iteration after this long")
)

// httpPeers are the servers the HTTP figures are divided by.
var httpPeers = []string{"gosdk", "mcpgo"}

// httpServer is one server process of the HTTP workload.
type httpServer struct {
	name, tool, want string
	url              string
	cmd              *exec.Cmd
	hc               *http.Client
}

// startHTTPServers starts every server of the HTTP workload for form
// ("session" or "stateless"), stopped when b ends.
func startHTTPServers(b testing.TB, form string) []*httpServer {
	var servers []*httpServer
	start := func(name, tool, path string, cmd *exec.Cmd, addr string) {
		s := &httpServer{name: name, tool: tool, want: "hello world", url: "http://" + addr + path, cmd: cmd}
		if strings.HasSuffix(tool, "_measure") {
			s.want = `"words":2`
		}
		s.hc = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: httpUsers, IdleConnTimeout: time.Minute}}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		if err := waitListening(addr, cmd); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		servers = append(servers, s)
	}
	peerPath := "/mcp"
	if form == "stateless" {
		peerPath = "/stateless"
	}
	for _, name := range httpPeers {
		if benchServerWanted(b, name) {
			addr := freeLoopbackAddr(b)
			start(name, "wasm_echo", peerPath, peerCommand(b, name, "-addr", addr), addr)
		}
	}
	cConfig, cTool := cKitConfig(b)
	for _, m := range []struct{ prefix, bin string }{{"", benchBinary(b)}, {"before-", *peersBaseline}} {
		if m.bin == "" {
			continue
		}
		serve := func(config, addr string) *exec.Cmd {
			return exec.Command(m.bin, "serve", "--no-watch", "--log-level", "error", "--config", config, "--http", addr)
		}
		if benchServerWanted(b, m.prefix+"go") {
			fillCodeCache(b, m.bin, "testdata/bench/plugins.toml", "wasm_echo")
			addr := freeLoopbackAddr(b)
			start(m.prefix+"go", "wasm_echo", "/mcp", serve("testdata/bench/plugins.toml", addr), addr)
		}
		if cConfig != "" && benchServerWanted(b, m.prefix+"c") {
			fillCodeCache(b, m.bin, cConfig, cTool)
			addr := freeLoopbackAddr(b)
			start(m.prefix+"c", cTool, "/mcp", serve(cConfig, addr), addr)
		}
	}
	return servers
}

// fillCodeCache serves config over stdio once and calls tool, so that the
// plugin's compiled code is in the cache when the measured server starts:
// mcphost waits at exit for the background compile it started (a first
// start serves on wazero's interpreter meanwhile, which this workload is
// not about; its peak RSS holds both tiers).
func fillCodeCache(tb testing.TB, bin, config, tool string) {
	s := startBenchServer(tb, "cache-fill", exec.Command(bin, "serve", "--no-watch", "--log-level", "error", "--config", config), tool)
	defer s.stop()
	c := newRealClient(s)
	if err := c.call(); err != nil {
		tb.Fatalf("cache fill: %v", err)
	}
}

// freeLoopbackAddr returns a loopback address with a port free a moment
// ago, for a server process to listen on.
func freeLoopbackAddr(b testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitListening dials addr until it answers, the process exits or a
// minute has passed.
func waitListening(addr string, cmd *exec.Cmd) error {
	exited := make(chan error, 1)
	go func() { // ends when the process has been waited for elsewhere or exits
		_, err := cmd.Process.Wait()
		exited <- err
	}()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case err := <-exited:
			return fmt.Errorf("exited before listening on %s: %v", addr, err)
		case <-time.After(20 * time.Millisecond): // polling a port: there is no event to wait for
		}
	}
	return fmt.Errorf("not listening on %s after a minute", addr)
}

// httpRounds measures every server in interleaved rounds and reports the
// medians and each server's peak RSS.
func httpRounds(b *testing.B, servers []*httpServer, form string) {
	n := *peersHTTPIters
	run := func(s *httpServer, n int) (rate float64, done int) {
		start := time.Now()
		done, err := s.run(form, n, time.Now().Add(*peersHTTPTime))
		if err != nil {
			b.Fatalf("%s: %v", s.name, err)
		}
		return float64(done) / time.Since(start).Seconds(), done
	}
	for _, s := range servers {
		run(s, 2*httpUsers) // warm-up: connections, pools, first-call paths
	}
	rounds := max(1, *peersHTTPRounds)
	rates := map[string][]float64{}
	cpu := newCPUMeter("iter")
	for round := range rounds {
		for _, s := range rotate(servers, round) {
			cpu.measure(s.name, s.cmd.Process.Pid, func() int {
				rate, done := run(s, n)
				rates[s.name] = append(rates[s.name], rate)
				return done
			})
		}
	}
	for _, s := range servers {
		b.ReportMetric(benchstat.Median(rates[s.name]), "iters/s:"+s.name)
		if mb, err := peakRSS(s.cmd.Process.Pid); err == nil {
			b.ReportMetric(mb, "peakRSS-MB:"+s.name)
		} else {
			b.Logf("%s: no peak RSS: %v", s.name, err)
		}
		if mb, err := exeRSS(s.cmd.Process.Pid); err == nil {
			b.ReportMetric(mb, "exeRSS-MB:"+s.name)
		} else {
			b.Logf("%s: no executable RSS: %v", s.name, err)
		}
	}
	names := make([]string, len(servers))
	for i, s := range servers {
		names[i] = s.name
	}
	reportRatios(b, names, httpPeers, rates)
	cpu.report(b, names, httpPeers)
}

// peakRSS is the peak resident set (VmHWM) of process pid in MiB.
func peakRSS(pid int) (float64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for l := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024, err
		}
	}
	return 0, errors.New("no VmHWM line in /proc/PID/status")
}

// exeRSS is how much of process pid's resident set, in MiB, is its
// executable's own pages (code, read-only data, pclntab): file pages
// that a peak RSS counts and that grow with the binary, not with the
// load. Linux maps page-cache folios whole, so a large binary's count
// depends on how its file was written and read, not only on the code
// that ran.
func exeRSS(pid int) (float64, error) {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return 0, err
	}
	smaps, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		return 0, err
	}
	var kb float64
	mine := false
	for l := range strings.SplitSeq(string(smaps), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":"): // a mapping's header line
			mine = len(f) >= 6 && strings.Join(f[5:], " ") == exe
		case mine && len(f) == 3 && f[0] == "Rss:":
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil {
				return 0, fmt.Errorf("smaps line %q: %w", l, err)
			}
			kb += v
		}
	}
	if kb == 0 {
		return 0, fmt.Errorf("no resident page of %s in /proc/%d/smaps", exe, pid)
	}
	return kb / 1024, nil
}

// run makes n iterations of form from httpUsers virtual users at once,
// starting none after deadline, and returns how many were done.
func (s *httpServer) run(form string, n int, deadline time.Time) (int, error) {
	var left, done atomic.Int64
	left.Store(int64(n))
	errs := make(chan error, httpUsers)
	for u := range httpUsers {
		go func() {
			for left.Add(-1) >= 0 && time.Now().Before(deadline) {
				var err error
				if form == "stateless" {
					err = s.statelessIteration(u)
				} else {
					err = s.sessionIteration(u)
				}
				if err != nil {
					errs <- err
					return
				}
				done.Add(1)
			}
			errs <- nil
		}()
	}
	var first error
	for range httpUsers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return int(done.Load()), first
}

// sessionIteration is initialize, notifications/initialized, one
// tools/call and DELETE, each answer decoded and checked.
func (s *httpServer) sessionIteration(user int) error {
	resp, err := s.post("", "", rpcRequest{JSONRPC: "2.0", ID: 1, Method: "initialize",
		Params: map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "bench", "version": "1"}}})
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	var init struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := s.answer(resp, 1, &init); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	if sid == "" || init.ProtocolVersion == "" {
		return fmt.Errorf("initialize: session %q, version %q", sid, init.ProtocolVersion)
	}
	if resp, err = s.post(sid, init.ProtocolVersion, map[string]string{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		return fmt.Errorf("notifications/initialized: %w", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("notifications/initialized: %s", resp.Status)
	}
	if err := s.call(sid, init.ProtocolVersion, int64(user)+2, nil); err != nil {
		return err
	}
	req, _ := http.NewRequest(http.MethodDelete, s.url, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("MCP-Protocol-Version", init.ProtocolVersion)
	if resp, err = s.hc.Do(req); err != nil {
		return fmt.Errorf("DELETE: %w", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("DELETE: %s", resp.Status)
	}
	return nil
}

// statelessIteration is one session-less POST of tools/call.
func (s *httpServer) statelessIteration(user int) error {
	meta := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "bench", "version": "1"},
	}
	return s.call("", "2026-07-28", int64(user)+2, meta)
}

// call makes one tools/call and checks its result.
func (s *httpServer) call(sid, version string, id int64, meta map[string]any) error {
	params := map[string]any{"name": s.tool, "arguments": map[string]any{"text": "hello world"}}
	if meta != nil {
		params["_meta"] = meta
	}
	resp, err := s.post(sid, version, rpcRequest{JSONRPC: "2.0", ID: id, Method: "tools/call", Params: params})
	if err != nil {
		return fmt.Errorf("tools/call: %w", err)
	}
	var res callToolResult
	if err := s.answer(resp, id, &res); err != nil {
		return fmt.Errorf("tools/call: %w", err)
	}
	if res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, s.want) {
		return fmt.Errorf("tools/call: unexpected result %+v", res)
	}
	return nil
}

// post sends msg as a client does (both content types accepted; the
// 2026-07-28 headers that mirror the body when version is that era's).
func (s *httpServer) post(sid, version string, msg any) (*http.Response, error) {
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	req, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
	}
	if version == "2026-07-28" {
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", s.tool)
	}
	return s.hc.Do(req)
}

// answer reads the response to request id as the SDK clients do: a
// reader goroutine decodes every message of the body (one JSON object, or
// an SSE stream of them) and hands the response to the caller, which then
// decodes its result into out.
func (s *httpServer) answer(resp *http.Response, id int64, out any) error {
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s: %.300s", resp.Status, b)
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	got := make(chan rpcResponse, 1)
	failed := make(chan error, 1)
	var once sync.Once
	go func() { // ends at the end of the body
		deliver := func(data []byte) error {
			var msg rpcResponse
			if err := json.Unmarshal(data, &msg); err != nil {
				return fmt.Errorf("decode %.200s: %w", data, err)
			}
			if msg.ID != nil && msg.Method == "" && *msg.ID == id {
				once.Do(func() { got <- msg })
			}
			return nil
		}
		var err error
		switch ct {
		case "application/json":
			var data []byte
			if data, err = io.ReadAll(resp.Body); err == nil {
				err = deliver(data)
			}
		case "text/event-stream":
			err = readSSE(resp.Body, deliver)
		default:
			err = fmt.Errorf("content type %q", ct)
		}
		if err == nil {
			err = errors.New("the body ended without the response")
		}
		failed <- err
	}()
	var msg rpcResponse
	select {
	case msg = <-got:
		<-failed // the rest of the body, read to its end so the connection is reused
	case err := <-failed:
		select {
		case msg = <-got: // the response, then the end of the body
		default:
			return err
		}
	}
	if msg.Error != nil {
		return fmt.Errorf("error response %s", msg.Error)
	}
	return json.Unmarshal(msg.Result, out)
}

// readSSE calls deliver with the data of every event of an SSE stream.
func readSSE(r io.Reader, deliver func([]byte) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if len(data) > 0 {
				if err := deliver(data); err != nil {
					return err
				}
				data = data[:0]
			}
		case bytes.HasPrefix(line, []byte("data:")):
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
		}
	}
	return sc.Err()
}

// TestPeersHTTP checks that every server of the HTTP workload answers
// both forms through the benchmark's client, so the benchmark cannot go
// stale unnoticed.
func TestPeersHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcphost and the HTTP peers")
	}
	for _, form := range []string{"session", "stateless"} {
		t.Run(form, func(t *testing.T) {
			for _, s := range startHTTPServers(t, form) {
				if done, err := s.run(form, 2*httpUsers, time.Now().Add(time.Minute)); err != nil || done != 2*httpUsers {
					t.Errorf("%s: %d of %d iterations: %v", s.name, done, 2*httpUsers, err)
				}
				peak, err := peakRSS(s.cmd.Process.Pid)
				if err != nil {
					t.Errorf("%s: peak RSS: %v", s.name, err)
				}
				if exe, err := exeRSS(s.cmd.Process.Pid); err != nil || exe > peak {
					t.Errorf("%s: executable's RSS %.1f MiB (%v); want some, at most the peak of %.1f MiB", s.name, exe, err, peak)
				}
			}
		})
	}
}
