// Package redistest starts private redis-server instances for the tests
// of more than one package (store's contract tests, and the replica
// tests of cmd/mcphost/internal/systest/cluster): a free loopback port, no persistence, stopped at
// cleanup. It is imported only by tests.
//
// Without redis-server on PATH a test is skipped, except under CI=true,
// where it fails: scripts/redis.sh installs it.
package redistest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Server is one redis-server process that a test owns.
type Server struct {
	t    testing.TB
	bin  string
	args []string
	Port int

	mu  sync.Mutex
	cmd *exec.Cmd
	out chan struct{} // closed when the process's output ends
}

// Start starts a redis-server on a free loopback port and stops it when
// the test ends. args are more redis-server options ("--requirepass", "pw").
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server is not on PATH (CI=true): run scripts/redis.sh")
		}
		t.Skipf("redis-server is not on PATH: run scripts/redis.sh to test against Redis")
	}
	s := &Server{t: t, bin: bin, args: args}
	var lastErr error
	for range 5 { // a port freed by the probe may be taken before redis binds it
		s.Port = freePort(t)
		if lastErr = s.start(); lastErr == nil {
			t.Cleanup(s.Stop)
			return s
		}
	}
	t.Fatalf("redis-server: %v", lastErr)
	return nil
}

// URL is the server's redis:// URL, database 0.
func (s *Server) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", s.Port) }

// Addr is host:port.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)) }

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// start runs redis-server on s.Port and returns once it logs that it
// accepts connections (read from its output: no polling).
func (s *Server) start() error {
	args := append([]string{"--port", strconv.Itoa(s.Port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "yes",
		"--dir", s.t.TempDir(), "--loglevel", "notice"}, s.args...)
	cmd := exec.Command(s.bin, args...)
	pr, pw := io.Pipe()
	cmd.Stdout = pw
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); pw.Close() }()
	ready := make(chan struct{})
	out := make(chan struct{})
	var log strings.Builder
	go func() {
		defer close(out)
		sc := bufio.NewScanner(pr)
		signalled := false
		for sc.Scan() {
			line := sc.Text()
			if !signalled {
				log.WriteString(line + "\n")
			}
			if !signalled && strings.Contains(line, "Ready to accept connections") {
				signalled = true
				close(ready)
			}
		}
		io.Copy(io.Discard, pr)
	}()
	select {
	case <-ready:
		s.mu.Lock()
		s.cmd, s.out = cmd, out
		s.mu.Unlock()
		return nil
	case err := <-exited:
		<-out
		return fmt.Errorf("exited before it was ready: %v\n%s", err, log.String())
	}
}

// Stop stops the server and waits for it to exit. It may be called more
// than once.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, out := s.cmd, s.out
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Kill()
	<-out
}

// Restart stops the server and starts a fresh, empty one on the same
// port, as a Redis restart without persistence looks to its clients.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	if err := s.start(); err != nil {
		s.t.Fatalf("redis-server restart on port %d: %v", s.Port, err)
	}
}
