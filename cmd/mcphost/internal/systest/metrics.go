package systest

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Replica is one `mcphost serve --http 127.0.0.1:0 --metrics 127.0.0.1:0`
// process.
type Replica struct {
	Base    string // http://127.0.0.1:PORT
	Metrics string // http://127.0.0.1:PORT/metrics
	Proc    *os.Process
	Exited  chan struct{} // closed once the process has exited
	State   *os.ProcessState
	Stop    func() // kills the process and waits for it (also done at cleanup)

	Mu   sync.Mutex
	tail []string // its last log lines, printed when the test fails
}

// replicaTail is how many of a replica's last log lines a failed test
// prints.
const replicaTail = 200

var (
	reListening = regexp.MustCompile(`msg=listening addr=(http://127\.0\.0\.1:[0-9]+)/mcp`)
	reMetrics   = regexp.MustCompile(`msg="metrics listening" addr=(http://127\.0\.0\.1:[0-9]+/metrics)`)
)

// StartReplica runs the mcphost binary with args and env and returns once
// both of its addresses are logged. The process is killed at cleanup.
func StartReplica(t *testing.T, env []string, args ...string) *Replica {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, Binary(t), append([]string{"serve", "--http", "127.0.0.1:0", "--metrics", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &Replica{Proc: cmd.Process, Exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		r.State = cmd.ProcessState
		pw.Close()
		close(r.Exited)
	}()
	r.Stop = func() {
		cmd.Process.Kill()
		<-r.Exited
	}
	t.Cleanup(func() {
		r.Stop()
		if t.Failed() {
			r.Mu.Lock()
			defer r.Mu.Unlock()
			t.Logf("replica %s, its last log lines:\n%s", r.Base, strings.Join(r.tail[max(0, len(r.tail)-replicaTail):], "\n"))
		}
	})
	found := make(chan *Replica, 1)
	go func() {
		var base, metrics string
		sent := false
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			r.Mu.Lock()
			if r.tail = append(r.tail, sc.Text()); len(r.tail) > 2*replicaTail {
				r.tail = append(r.tail[:0], r.tail[len(r.tail)-replicaTail:]...)
			}
			r.Mu.Unlock()
			if m := reListening.FindStringSubmatch(sc.Text()); m != nil {
				base = m[1]
			}
			if m := reMetrics.FindStringSubmatch(sc.Text()); m != nil {
				metrics = m[1]
			}
			if base != "" && metrics != "" && !sent {
				r.Base, r.Metrics = base, metrics
				found <- r
				sent = true
			}
		}
	}()
	select {
	case r := <-found:
		return r
	case <-ctx.Done():
		t.Fatal("mcphost logged no listening and metrics lines")
		return nil
	}
}

// WaitOK polls url (a probe of an external process) until it answers 200,
// for at most a minute.
func WaitOK(t *testing.T, url string) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%s never answered 200", url)
		}
	}
}

// ScrapeValue returns the value of the metric line starting with series
// ("" when absent).
func ScrapeValue(t *testing.T, url, series string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}
