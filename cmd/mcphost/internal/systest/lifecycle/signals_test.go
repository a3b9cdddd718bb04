//go:build unix

package lifecycle

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
)

// The shutdown tests run the real `mcphost serve` (built once per test
// binary) with the faulty example plugin, whose slow tool sleeps as long
// as it is asked, and signal it the way a supervisor or a terminal does.

// waitLong bounds the waits a test fails on: the first load may build the
// faulty example from source.
const waitLong = 5 * time.Minute

// proc is one running `mcphost serve`.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout chan []byte   // the lines of stdout; closed at its end
	errs   chan string   // the lines of stderr; closed at its end
	exited chan struct{} // closed when cmd.Wait has returned
	mu     sync.Mutex
	log    []string // every stderr line so far, for failure messages
	seen   int      // lines of log that waitLog has looked at
}

// faultyConfig writes a plugins.toml serving the faulty example, with a
// timeout longer than any call of these tests unless its extra lines (in
// the plugin's table) set another, and returns its path.
func faultyConfig(t *testing.T, extra string) string {
	t.Helper()
	src, err := filepath.Abs("../../examples/faulty")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "plugins.toml")
	if extra == "" {
		extra = `timeout = "120s"`
	}
	conf := fmt.Sprintf("[server]\nstartup_wait = \"300s\"\n\n[[plugin]]\nname = \"faulty\"\nsource = %q\n%s\n", src, extra)
	if err := os.WriteFile(file, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// startProc starts mcphost with args. stdout is read as lines unless the
// caller passes its own (then p.stdout stays nil).
func startProc(t *testing.T, stdout *os.File, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(systest.Binary(t), args...), errs: make(chan string, 1024), exited: make(chan struct{})}
	var err error
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	var out io.ReadCloser
	if stdout != nil {
		p.cmd.Stdout = stdout
	} else if out, err = p.cmd.StdoutPipe(); err != nil {
		t.Fatal(err)
	}
	errR, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if out != nil {
		p.stdout = make(chan []byte, 64)
		go func() { // ends with the process's stdout
			defer close(p.stdout)
			sc := bufio.NewScanner(out)
			sc.Buffer(nil, 16<<20)
			for sc.Scan() {
				p.stdout <- bytes.Clone(sc.Bytes())
			}
		}()
	}
	// Wait closes the pipes, so it runs once stderr is read to the end
	// (its reader never blocks): lines still buffered would be lost.
	stderrRead := make(chan struct{})
	go func() { // ends with the process's stderr
		defer close(stderrRead)
		defer close(p.errs)
		sc := bufio.NewScanner(errR)
		for sc.Scan() {
			p.mu.Lock()
			p.log = append(p.log, sc.Text())
			p.mu.Unlock()
			select {
			case p.errs <- sc.Text():
			default: // nobody is waiting for lines this far ahead
			}
		}
	}()
	go func() { // ends with the process
		<-stderrRead
		p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.exited
	})
	return p
}

func (p *proc) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.log, "\n")
}

// waitLog waits for a stderr line containing s.
func (p *proc) waitLog(t *testing.T, s string) {
	t.Helper()
	timeout := time.After(waitLong)
	for {
		p.mu.Lock()
		for ; p.seen < len(p.log); p.seen++ {
			if strings.Contains(p.log[p.seen], s) {
				p.seen++
				p.mu.Unlock()
				return
			}
		}
		p.mu.Unlock()
		select {
		case _, ok := <-p.errs:
			if !ok {
				p.mu.Lock()
				done := p.seen == len(p.log)
				p.mu.Unlock()
				if done {
					t.Fatalf("stderr ended without a line containing %q:\n%s", s, p.stderr())
				}
			}
		case <-timeout:
			t.Fatalf("no stderr line containing %q within %v:\n%s", s, waitLong, p.stderr())
		}
	}
}

func (p *proc) send(t *testing.T, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(p.stdin, l+"\n"); err != nil {
			t.Fatalf("write to stdin: %v", err)
		}
	}
}

// response waits for the stdout line answering id.
func (p *proc) response(t *testing.T, id string) []byte {
	t.Helper()
	timeout := time.After(waitLong)
	for {
		select {
		case line, ok := <-p.stdout:
			if !ok {
				t.Fatalf("stdout ended without the response to id %s\nstderr:\n%s", id, p.stderr())
			}
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(line, &m) == nil && string(m.ID) == id {
				return line
			}
		case <-timeout:
			t.Fatalf("no response to id %s within %v\nstderr:\n%s", id, waitLong, p.stderr())
		}
	}
}

func (p *proc) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// exit waits for the process to end, at most within, and returns its exit
// status (a negative one when a signal killed it).
func (p *proc) exit(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(within):
		t.Fatalf("still running %v later\nstderr:\n%s", within, p.stderr())
		return 0
	}
}

const (
	initLine  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"signals","version":"1"}}}`
	initedMsg = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	echoCall  = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"faulty_echo","arguments":{"text":"loaded"}}}`
)

func slowCall(id, ms int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"faulty_slow","arguments":{"ms":%d}}}`, id, ms)
}

// startStdioCall starts serve over stdio with the faulty plugin loaded and
// a slow call of ms (id 3) in flight: the ping sent after it is answered
// only once the call's line has been read and dispatched.
func startStdioCall(t *testing.T, ms int, args ...string) *proc {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the faulty example")
	}
	p := startProc(t, nil, append([]string{"serve", "--config", faultyConfig(t, ""), "--no-watch"}, args...)...)
	p.send(t, initLine, initedMsg, echoCall)
	p.response(t, "1")
	if got := p.response(t, "2"); !bytes.Contains(got, []byte(`"loaded"`)) {
		t.Fatalf("echo call: got %s", got)
	}
	p.send(t, slowCall(3, ms), `{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	p.response(t, "4")
	return p
}

// TestSignalAnswersCallsInFlight: SIGTERM or SIGINT over stdio stops
// reading, answers the call in flight, records the answer in the audit
// log, and exits 0.
func TestSignalAnswersCallsInFlight(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			audit := filepath.Join(t.TempDir(), "audit.jsonl")
			p := startStdioCall(t, 1500, "--audit-log", audit)
			p.signal(t, sig)
			if got := p.response(t, "3"); !bytes.Contains(got, []byte("slept")) {
				t.Errorf("the call in flight: got %s; want its result", got)
			}
			if code := p.exit(t, waitLong); code != 0 {
				t.Errorf("exit status %d; want 0\nstderr:\n%s", code, p.stderr())
			}
			data, err := os.ReadFile(audit)
			if err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(`"dir":"out".*"msg":\{"jsonrpc":"2.0","id":3,"result".*slept`).Match(data) {
				t.Errorf("the audit log lacks the answer to the call in flight:\n%s", data)
			}
		})
	}
}

// TestSecondSignalExitsAtOnce: a second signal does not wait for the call
// still running.
func TestSecondSignalExitsAtOnce(t *testing.T) {
	p := startStdioCall(t, 100_000)
	p.signal(t, syscall.SIGTERM)
	p.waitLog(t, "shutting down")
	p.signal(t, syscall.SIGTERM)
	// The call has 100 s to go and the grace is 10 s: 5 s is "at once".
	if code := p.exit(t, 5*time.Second); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit status %d; want %d\nstderr:\n%s", code, 128+int(syscall.SIGTERM), p.stderr())
	}
	p.waitLog(t, "second signal")
}

// TestStdoutClosed: a client that closes the server's stdout ends the
// session with one line on stderr and exit status 0, not death by SIGPIPE.
func TestStdoutClosed(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "plugins.toml")
	if err := os.WriteFile(file, []byte("[server]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, w, "serve", "--config", file, "--no-watch")
	w.Close()
	p.waitLog(t, "session started")
	r.Close()
	p.send(t, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if code := p.exit(t, waitLong); code != 0 {
		t.Errorf("exit status %d (%v); want 0\nstderr:\n%s", code, p.cmd.ProcessState, p.stderr())
	}
	for range p.errs { // the whole of stderr
	}
	n := 0
	for _, l := range strings.Split(p.stderr(), "\n") {
		if strings.Contains(l, "stdout") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d stderr lines mention stdout; want 1:\n%s", n, p.stderr())
	}
}

// httpProc is serve --http with an MCP session open and the faulty plugin
// loaded; its audit log is a FIFO whose lines the test reads, to know
// when a call is in flight without waiting for time to pass.
type httpProc struct {
	*proc
	url, sid string
	audit    chan string
}

// startHTTP starts it with extra lines in the faulty plugin's table (see
// faultyConfig).
func startHTTP(t *testing.T, extra string) *httpProc {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the faulty example")
	}
	fifo := filepath.Join(t.TempDir(), "audit.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	h := &httpProc{audit: make(chan string, 1024)}
	go func() { // ends when the server closes the FIFO (it exits)
		f, err := os.Open(fifo) // blocks until the server opens it
		if err != nil {
			close(h.audit)
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			h.audit <- sc.Text()
		}
		close(h.audit)
	}()
	h.proc = startProc(t, nil, "serve", "--config", faultyConfig(t, extra), "--no-watch", "--http", "127.0.0.1:0", "--audit-log", fifo)
	re := regexp.MustCompile(`msg=listening addr=(http://\S+)`)
	timeout := time.After(waitLong)
	for h.url == "" {
		select {
		case l, ok := <-h.errs:
			if !ok {
				t.Fatalf("no listening line:\n%s", h.stderr())
			}
			if m := re.FindStringSubmatch(l); m != nil {
				h.url = m[1]
			}
		case <-timeout:
			t.Fatalf("no listening line within %v:\n%s", waitLong, h.stderr())
		}
	}
	h.open(t)
	if _, body := h.post(t, echoCall); !strings.Contains(body, `"loaded"`) {
		t.Fatalf("echo call: %s", body)
	}
	return h
}

// open starts the MCP session h posts on.
func (h *httpProc) open(t *testing.T) {
	t.Helper()
	resp, body := h.post(t, initLine)
	h.sid = resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || h.sid == "" {
		t.Fatalf("initialize: %s %s", resp.Status, body)
	}
	if resp, body := h.post(t, initedMsg); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("initialized: %s %s", resp.Status, body)
	}
}

// client is another MCP client of the same server: a session of its own.
func (h *httpProc) client(t *testing.T) *httpProc {
	t.Helper()
	c := &httpProc{proc: h.proc, url: h.url, audit: h.audit}
	c.open(t)
	return c
}

// post sends one message on the session and returns the whole answer.
func (h *httpProc) post(t *testing.T, msg string) (*http.Response, string) {
	t.Helper()
	resp, err := h.postErr(msg)
	if err != nil {
		t.Fatalf("POST %s: %v\nstderr:\n%s", msg, err, h.stderr())
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("POST %s: reading the answer: %v", msg, err)
	}
	return resp, string(body)
}

func (h *httpProc) postErr(msg string) (*http.Response, error) {
	return h.postCtx(context.Background(), msg)
}

// postCtx posts msg on a connection that ctx's end closes.
func (h *httpProc) postCtx(ctx context.Context, msg string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, strings.NewReader(msg))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if h.sid != "" {
		req.Header.Set("Mcp-Session-Id", h.sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	return http.DefaultClient.Do(req)
}

// callInFlight posts a slow call of ms with id and returns once the server
// has handed it to the session. The answer's body comes on the channel.
func (h *httpProc) callInFlight(t *testing.T, id, ms int) <-chan string {
	t.Helper()
	answer := make(chan string, 1)
	go func() {
		resp, err := h.postErr(slowCall(id, ms))
		if err != nil {
			answer <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			answer <- "error reading: " + err.Error()
			return
		}
		answer <- resp.Status + " " + string(body)
	}()
	h.handedOver(t, id)
	return answer
}

// handedOver returns once the server has handed the tools/call with id to
// its session: its audit line is written under the same lock that shutdown
// takes first.
func (h *httpProc) handedOver(t *testing.T, id int) {
	t.Helper()
	want := `"dir":"in","session":`
	idField := fmt.Sprintf(`"id":%d,"method":"tools/call"`, id)
	timeout := time.After(waitLong)
	for {
		select {
		case l, ok := <-h.audit:
			if !ok {
				t.Fatalf("the audit log ended before the call came in\nstderr:\n%s", h.stderr())
			}
			if strings.Contains(l, want) && strings.Contains(l, idField) {
				return
			}
		case <-timeout:
			t.Fatalf("the call did not come in within %v\nstderr:\n%s", waitLong, h.stderr())
		}
	}
}

// TestSignalAnswersCallsInFlightHTTP: SIGTERM over HTTP refuses new work,
// answers the POST in flight, and exits 0.
func TestSignalAnswersCallsInFlightHTTP(t *testing.T) {
	h := startHTTP(t, "")
	answer := h.callInFlight(t, 3, 1500)
	h.signal(t, syscall.SIGTERM)
	select {
	case got := <-answer:
		if !strings.HasPrefix(got, "200 ") || !strings.Contains(got, "slept") {
			t.Errorf("the call in flight: got %s; want 200 with its result", got)
		}
	case <-time.After(waitLong):
		t.Fatalf("no answer within %v\nstderr:\n%s", waitLong, h.stderr())
	}
	if code := h.exit(t, waitLong); code != 0 {
		t.Errorf("exit status %d; want 0\nstderr:\n%s", code, h.stderr())
	}
}

// TestSecondSignalExitsAtOnceHTTP: over HTTP too, a second signal does not
// wait for the call still running.
func TestSecondSignalExitsAtOnceHTTP(t *testing.T) {
	h := startHTTP(t, "")
	h.callInFlight(t, 3, 100_000)
	h.signal(t, syscall.SIGTERM)
	h.waitLog(t, "shutting down")
	h.signal(t, syscall.SIGINT)
	if code := h.exit(t, 5*time.Second); code != 128+int(syscall.SIGINT) {
		t.Errorf("exit status %d; want %d\nstderr:\n%s", code, 128+int(syscall.SIGINT), h.stderr())
	}
}

// TestAbandonedCallsCancelled: ten calls whose clients hang up before the
// answer are cancelled, so a call from another client answers at once
// rather than queueing behind them. Each abandoned call runs the faulty
// plugin's loop tool, which spins until it is interrupted or its 30 s
// timeout; the plugin has two instances, so without cancellation the next
// call would wait for five rounds of timeouts (150 s).
func TestAbandonedCallsCancelled(t *testing.T) {
	h := startHTTP(t, "timeout = \"30s\"\nmax_instances = 2")
	var hangUps []context.CancelFunc
	var gone sync.WaitGroup
	for i := range 10 {
		ctx, hangUp := context.WithCancel(context.Background())
		hangUps = append(hangUps, hangUp)
		id := 10 + i
		gone.Go(func() {
			if resp, err := h.postCtx(ctx, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"faulty_loop"}}`, id)); err == nil {
				resp.Body.Close()
				t.Errorf("abandoned call %d: answered %s before the client hung up", id, resp.Status)
			}
		})
		h.handedOver(t, id)
	}
	start := time.Now()
	for _, hangUp := range hangUps {
		hangUp()
	}
	gone.Wait()
	other := h.client(t)
	_, body := other.post(t, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"faulty_echo","arguments":{"text":"next"}}}`)
	took := time.Since(start)
	if !strings.Contains(body, `"next"`) {
		t.Fatalf("the other client's call: got %s", body)
	}
	if took > 10*time.Second {
		t.Errorf("the other client's call answered %v after the hang-ups; want it well within one abandoned call's 30 s timeout", took)
	}
	t.Logf("the other client's call answered %v after 10 clients hung up", took)
}
