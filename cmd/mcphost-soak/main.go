// Command mcphost-soak runs mcphost under mixed load for a while and
// fails if its memory, goroutines or open files grow without bound, or if
// a call is lost. scripts/soak.sh builds mcphost and runs it:
//
//	go run ./cmd/mcphost-soak -mcphost /path/to/mcphost -duration 30m
//
// Two servers run: one on Streamable HTTP with several client sessions
// and a slowloris, one on stdio with one client. Each client loops over a
// mix of calls (echo, slow, big, flood and the faults of examples/faulty);
// plugins.toml is rewritten every few seconds, so the plugin reloads
// under the calls. Every few seconds each server's RSS, goroutines (from
// --debug-addr's pprof) and open fds are sampled. At the end the maximum
// of the last third of the run is compared with the maximum of the first
// third (medians: spikes under a burst of calls are not growth); growth
// beyond a tolerance (half as much again, plus a fixed slack) fails the run.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	var o options
	flag.StringVar(&o.bin, "mcphost", "mcphost", "the mcphost binary")
	flag.DurationVar(&o.dur, "duration", 30*time.Minute, "how long to run")
	flag.StringVar(&o.faulty, "faulty", "examples/faulty", "the faulty example's source directory")
	flag.DurationVar(&o.every, "sample", 5*time.Second, "sampling period")
	flag.DurationVar(&o.reload, "reload", 3*time.Second, "how often plugins.toml changes")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := run(ctx, os.Stdout, o)
	if err == nil {
		err = verdict(os.Stdout, rep)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak: FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("soak: PASS")
}

// options are the flags of a run.
type options struct {
	bin, faulty        string        // the mcphost binary; the faulty example's source
	dur, every, reload time.Duration // the run; the sampling period; the plugins.toml rewrites
	// until, when set, lengthens the run past dur until it holds (or
	// the caller's ctx ends): a brief run on a loaded machine goes on
	// until it has seen what it is meant to check.
	until func(*counters) bool
}

// counters are the calls done and lost, across clients, and the reloads
// the servers logged.
type counters struct{ done, lost, refused, slowCut, reloads atomic.Int64 }

// report is what a run saw.
type report struct {
	samples                               []sample
	done, lost, refused, slowCut, reloads int64
}

// run soaks two servers for o.dur, printing samples to out, and returns
// what it saw; its error says why the run could not be made ([verdict]
// judges what it saw).
func run(ctx context.Context, out io.Writer, o options) (report, error) {
	var rep report
	src, err := filepath.Abs(o.faulty)
	if err != nil {
		return rep, err
	}
	dir, err := os.MkdirTemp("", "soak")
	if err != nil {
		return rep, err
	}
	defer os.RemoveAll(dir)
	conf := filepath.Join(dir, "plugins.toml")
	writeConf := func(n int) error {
		// The timeout alternates, so the plugin's hash changes and it reloads.
		return os.WriteFile(conf, fmt.Appendf(nil, "[server]\nbody_timeout = \"2s\"\n\n[[plugin]]\nname = \"faulty\"\nsource = %q\ntimeout = \"%dms\"\nmemory = \"64MiB\"\n", src, 1000+n%2), 0o644)
	}
	if err := writeConf(0); err != nil {
		return rep, err
	}

	var c counters
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	httpSrv, err := start(ctx, o.bin, conf, dir, &c, "--http", "127.0.0.1:0")
	if err != nil {
		return rep, err
	}
	stdioSrv, err := start(ctx, o.bin, conf, dir, &c)
	if err != nil {
		return rep, err
	}
	fmt.Fprintf(out, "soak: %v; http server pid %d at %s; stdio server pid %d\n", o.dur, httpSrv.cmd.Process.Pid, httpSrv.addr, stdioSrv.cmd.Process.Pid)

	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() { httpClient(ctx, httpSrv.addr, i, &c) })
	}
	wg.Go(func() { stdioClient(ctx, stdioSrv, &c) })
	for range 4 {
		wg.Go(func() { slowloris(ctx, httpSrv.addr, &c) })
	}
	wg.Go(func() {
		t := time.NewTicker(o.reload)
		defer t.Stop()
		for n := 1; ; n++ {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := writeConf(n); err != nil {
					fmt.Fprintln(os.Stderr, "soak: rewrite plugins.toml:", err)
				}
			}
		}
	})
	var samples []sample
	t := time.NewTicker(o.every)
	start := time.Now()
	end := time.NewTimer(o.dur)
	defer end.Stop()
	over := false // dur has passed; the run ends once until holds
sampling:
	for {
		select {
		case <-ctx.Done():
			break sampling
		case <-end.C:
			over = true
		case <-t.C:
			if !over {
				s := sample{at: time.Since(start), done: c.done.Load(), lost: c.lost.Load()}
				s.http = measure(httpSrv)
				s.stdio = measure(stdioSrv)
				if ctx.Err() != nil {
					// The run ended while it was measured: the servers are
					// being stopped, and their debug endpoints may be gone.
					break sampling
				}
				samples = append(samples, s)
				fmt.Fprintf(out, "soak: %6s  http rss %6.1f MiB gor %4d fds %4d | stdio rss %6.1f MiB gor %4d fds %4d | calls %d lost %d refused %d slow cut %d\n",
					s.at.Round(time.Second), mib(s.http.rss), s.http.goroutines, s.http.fds, mib(s.stdio.rss), s.stdio.goroutines, s.stdio.fds,
					s.done, s.lost, c.refused.Load(), c.slowCut.Load())
			}
		}
		if over && (o.until == nil || o.until(&c)) {
			if o.until != nil && time.Since(start) > o.dur+o.every {
				fmt.Fprintf(out, "soak: ran %v, past %v, until it saw calls and cut connections\n", time.Since(start).Round(time.Second), o.dur)
			}
			cancel()
			break sampling
		}
	}
	t.Stop()
	wg.Wait()
	stdioSrv.stdin.Close()
	httpSrv.wait()
	stdioSrv.wait()
	rep = report{samples: samples, done: c.done.Load(), lost: c.lost.Load(), refused: c.refused.Load(), slowCut: c.slowCut.Load(), reloads: c.reloads.Load()}
	return rep, nil
}

type usage struct {
	rss        int64
	goroutines int
	fds        int
}

type sample struct {
	at          time.Duration
	http, stdio usage
	done, lost  int64
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// verdict compares the last third of the run with the first, and fails a
// run that lost calls or completed none.
func verdict(out io.Writer, rep report) error {
	samples := rep.samples
	if len(samples) < 6 {
		return fmt.Errorf("only %d samples: run longer", len(samples))
	}
	third := len(samples) / 3
	first, last := samples[:third], samples[len(samples)-third:]
	mid := samples[len(samples)/2]
	// The median of a third, not its maximum: a burst of calls (a flood, a
	// loop waiting for its timeout) is a spike, not growth; a leak lifts
	// the whole last third.
	median := func(ss []sample, f func(sample) float64) float64 {
		vs := make([]float64, len(ss))
		for i, s := range ss {
			vs[i] = f(s)
		}
		slices.Sort(vs)
		return vs[len(vs)/2]
	}
	var errs []error
	check := func(name string, f func(sample) float64, slack float64) {
		a, b := median(first, f), median(last, f)
		fmt.Fprintf(out, "soak: %-18s start %8.1f  middle %8.1f  end %8.1f  (first-third median %.1f, last-third median %.1f)\n",
			name, f(samples[0]), f(mid), f(samples[len(samples)-1]), a, b)
		if b > a*1.5+slack {
			errs = append(errs, fmt.Errorf("%s grew from %.1f to %.1f", name, a, b))
		}
	}
	check("http rss MiB", func(s sample) float64 { return mib(s.http.rss) }, 32)
	check("http goroutines", func(s sample) float64 { return float64(s.http.goroutines) }, 50)
	check("http fds", func(s sample) float64 { return float64(s.http.fds) }, 20)
	check("stdio rss MiB", func(s sample) float64 { return mib(s.stdio.rss) }, 32)
	check("stdio goroutines", func(s sample) float64 { return float64(s.stdio.goroutines) }, 50)
	check("stdio fds", func(s sample) float64 { return float64(s.stdio.fds) }, 20)
	fmt.Fprintf(out, "soak: calls done %d, lost %d, refused by limits %d, slow bodies cut %d, reloads %d\n", rep.done, rep.lost, rep.refused, rep.slowCut, rep.reloads)
	if n := rep.lost; n > 0 {
		errs = append(errs, fmt.Errorf("%d calls lost", n))
	}
	if rep.done == 0 {
		errs = append(errs, errors.New("no call completed"))
	}
	return errors.Join(errs...)
}

// server is one mcphost process.
type server struct {
	cmd       *exec.Cmd
	addr      string // the MCP endpoint (HTTP only)
	debug     string // the pprof base URL
	stdin     io.WriteCloser
	stdout    *bufio.Reader
	exited    chan struct{}
	stderrBuf *bytes.Buffer
}

var (
	listenRE = regexp.MustCompile(`msg=listening addr=(\S+)`)
	debugRE  = regexp.MustCompile(`msg="debug listening" addr=(\S+)`)
)

// start runs mcphost serve and waits for its debug address (and, over
// HTTP, its endpoint) in its log; it counts the reloads the log reports.
func start(ctx context.Context, bin, conf, dir string, c *counters, args ...string) (*server, error) {
	args = append([]string{"serve", "--config", conf, "--debug-addr", "127.0.0.1:0", "--log-level", "info", "--watch-debounce", "50ms"}, args...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, stdin: stdin, stdout: bufio.NewReaderSize(stdout, 1<<20), exited: make(chan struct{})}
	found := make(chan struct{})
	go func() { // ends when the process closes stderr
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		wantHTTP := len(args) > 0 && slices.Contains(args, "--http")
		var once sync.Once
		for sc.Scan() {
			line := sc.Text()
			if m := listenRE.FindStringSubmatch(line); m != nil {
				s.addr = m[1]
			}
			if m := debugRE.FindStringSubmatch(line); m != nil {
				s.debug = m[1]
			}
			if strings.Contains(line, "msg=reloaded") {
				c.reloads.Add(1)
			}
			if s.debug != "" && (!wantHTTP || s.addr != "") {
				once.Do(func() { close(found) })
			}
			if strings.Contains(line, "level=ERROR") && !strings.Contains(line, `msg="guest log"`) {
				fmt.Fprintln(os.Stderr, "soak: server:", line)
			}
		}
	}()
	go func() { // ends when the process does
		_ = cmd.Wait()
		close(s.exited)
	}()
	select {
	case <-found:
	case <-s.exited:
		return nil, errors.New("mcphost exited at start")
	case <-time.After(2 * time.Minute):
		_ = cmd.Process.Kill()
		return nil, errors.New("mcphost did not log its addresses within 2 minutes")
	}
	go func() { // stops the server with the run
		<-ctx.Done()
		_ = cmd.Process.Signal(os.Interrupt)
	}()
	return s, nil
}

func (s *server) wait() {
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

var goroutineRE = regexp.MustCompile(`goroutine profile: total (\d+)`)

func measure(s *server) usage {
	var u usage
	pid := s.cmd.Process.Pid
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				u.rss = kb << 10
			}
		}
	}
	if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
		u.fds = len(ents)
	}
	resp, err := http.Get(s.debug + "goroutine?debug=1")
	if err == nil {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		if m := goroutineRE.FindSubmatch(b); m != nil {
			u.goroutines, _ = strconv.Atoi(string(m[1]))
		}
	}
	return u
}

// mix is the cycle of calls each client makes; hostile ones included.
var mix = []struct {
	tool string
	args string
}{
	{"faulty_echo", `{"text":"hello"}`},
	{"faulty_slow", `{"ms":20}`},
	{"faulty_big", `{"bytes":100000}`},
	{"faulty_echo", `{"text":"again"}`},
	{"faulty_flood", `{"count":2000}`},
	{"faulty_panic", `{}`},
	{"faulty_echo", `{"text":"after a trap"}`},
	{"faulty_recovered_panic", `{}`},
	{"faulty_junk", `{}`},
	{"faulty_stack_overflow", `{}`},
	{"faulty_eat", `{}`},
	{"faulty_exit", `{}`},
	{"faulty_loop", `{}`},
}

const initialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"soak","version":"1"}}}`

// httpClient loops over mix on its own session, starting a new session
// every 50 calls (and ending the old one), until ctx is done.
func httpClient(ctx context.Context, url string, n int, c *counters) {
	hc := &http.Client{Timeout: time.Minute}
	post := func(sid, body string) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		return hc.Do(req)
	}
	for call := 0; ctx.Err() == nil; {
		resp, err := post("", initialize)
		if err != nil {
			continue
		}
		sid := resp.Header.Get("Mcp-Session-Id")
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if sid == "" {
			c.refused.Add(1)
			continue
		}
		if resp, err := post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err == nil {
			resp.Body.Close()
		}
		if resp, err := post(sid, `{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}}`); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		for range 50 {
			m := mix[(call+n)%len(mix)]
			call++
			id := call + 1
			resp, err := post(sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, m.tool, m.args))
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				fmt.Fprintf(os.Stderr, "soak: http %s: %v\n", m.tool, err)
				c.lost.Add(1)
				continue
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch {
			case ctx.Err() != nil:
				return
			case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
				c.refused.Add(1)
			case err != nil || !bytes.Contains(body, fmt.Appendf(nil, `"id":%d,"result"`, id)):
				fmt.Fprintf(os.Stderr, "soak: http %s: %d %.200s %v\n", m.tool, resp.StatusCode, body, err)
				c.lost.Add(1)
			default:
				c.done.Add(1)
			}
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, url, nil)
		req.Header.Set("Mcp-Session-Id", sid)
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}

// stdioClient loops over mix on the stdio server until ctx is done; a
// response that does not come within a minute is a lost call.
func stdioClient(ctx context.Context, s *server, c *counters) {
	lines := make(chan []byte, 64)
	go func() { // ends when the server closes stdout
		defer close(lines)
		for {
			line, err := s.stdout.ReadBytes('\n')
			if err != nil {
				return
			}
			if bytes.Contains(line, []byte(`"id":`)) && !bytes.Contains(line, []byte(`"method":`)) {
				lines <- line
			}
		}
	}()
	send := func(msg string) bool {
		_, err := io.WriteString(s.stdin, msg+"\n")
		return err == nil
	}
	await := func(id int) bool {
		want := fmt.Appendf(nil, `"id":%d,`, id)
		timer := time.NewTimer(time.Minute)
		defer timer.Stop()
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					return false
				}
				if bytes.Contains(line, want) {
					return true
				}
			case <-timer.C:
				return false
			case <-ctx.Done():
				return true
			}
		}
	}
	if !send(initialize) || !await(0) {
		c.lost.Add(1)
		return
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"info"}}`)
	for id := 2; ctx.Err() == nil; id++ {
		m := mix[id%len(mix)]
		if !send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, m.tool, m.args)) {
			c.lost.Add(1)
			return
		}
		if !await(id) {
			fmt.Fprintf(os.Stderr, "soak: stdio %s: no answer\n", m.tool)
			c.lost.Add(1)
			continue
		}
		if ctx.Err() == nil {
			c.done.Add(1)
		}
	}
}

// slowloris opens connections that send headers and then drip a body a
// byte a second, one after another; the server must cut each (408 or a
// closed connection) within its body_timeout.
func slowloris(ctx context.Context, url string, c *counters) {
	host := strings.TrimPrefix(url, "http://")
	host, path, _ := strings.Cut(host, "/")
	for ctx.Err() == nil {
		conn, err := net.DialTimeout("tcp", host, 5*time.Second)
		if err != nil {
			continue
		}
		fmt.Fprintf(conn, "POST /%s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 10000\r\n\r\n", path)
		cut := make(chan struct{})
		go func() { // ends when the server closes the connection
			defer close(cut)
			io.Copy(io.Discard, conn)
		}()
		tick := time.NewTicker(time.Second)
	drip:
		for {
			select {
			case <-ctx.Done():
				break drip
			case <-cut:
				c.slowCut.Add(1)
				break drip
			case <-tick.C:
				conn.Write([]byte{' '})
			}
		}
		tick.Stop()
		conn.Close()
		<-cut
	}
}
