package lifecycle

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
)

// TestInterruptedBuildIsKept: a client that closes stdin while the first
// start still builds a Go-source plugin does not cost the next start that
// build. serve finishes it before exiting (up to --build-wait) and says
// so; the next start serves the plugin from mcphost's build cache without
// running go at all. The go command is a wrapper (the [server] go key)
// that holds `go build` until the test lets it go, so stdin closes while
// the build is certainly running.
func TestInterruptedBuildIsKept(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go plugin and runs mcphost serve twice")
	}
	realGo, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	gocache, err := exec.Command(realGo, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	hold := filepath.Join(dir, "hold")
	if err := syscall.Mkfifo(hold, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	wrapper := filepath.Join(dir, "go")
	script := fmt.Sprintf("#!/bin/sh\nif [ \"$1\" = build ]; then echo 'wrapper: go build held' >&2; read _ < %q; fi\nexec %q \"$@\"\n", hold, realGo)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := filepath.Abs(filepath.Join("testdata", "counter"))
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "plugins.toml")
	body := fmt.Sprintf("[server]\ngo = %s\nstartup_wait = \"10m\"\nload_timeout = \"15m\"\n\n[[plugin]]\nname = \"counter\"\nsource = %s\ntool_prefix = \"\"\n", systest.Quote(wrapper), systest.Quote(src))
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// A cache of mcphost's own (cold), go's build cache as it is.
	env := append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"), "GOCACHE="+strings.TrimSpace(string(gocache)))

	first := exec.CommandContext(ctx, systest.Binary(t), "serve", "--config", conf, "--no-watch")
	first.Env = env
	stdin, stdout, log := startPiped(t, first)
	go io.Copy(io.Discard, stdout)
	if _, err := log.wait(ctx, "go build held"); err != nil {
		t.Fatalf("first start: %v\n%s", err, log)
	}
	stdin.Close() // the client leaves mid-build
	if _, err := log.wait(ctx, "finishing builds for the cache", "plugins=[counter]"); err != nil {
		t.Fatalf("first start: %v\n%s", err, log)
	}
	f, err := os.OpenFile(hold, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("go\n")
	f.Close()
	<-log.closed
	if err := first.Wait(); err != nil {
		t.Fatalf("first start: %v\n%s", err, log)
	}
	if log.find("builds finished and stored in the cache", "plugins=[counter]") == "" {
		t.Fatalf("first start: the build was not finished at exit:\n%s", log)
	}

	second := exec.CommandContext(ctx, systest.Binary(t), "serve", "--config", conf, "--no-watch", "--log-level", "debug")
	second.Env = env
	stdin, stdout, log = startPiped(t, second)
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
	lines := bufio.NewScanner(stdout)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	var list string
	for lines.Scan() {
		if strings.Contains(lines.Text(), `"id":2,`) {
			list = lines.Text()
			break
		}
	}
	stdin.Close()
	io.Copy(io.Discard, stdout)
	<-log.closed
	if err := second.Wait(); err != nil {
		t.Fatalf("second start: %v\n%s", err, log)
	}
	if !strings.Contains(list, `"name":"count"`) {
		t.Errorf("second start: tools/list %s; want count", list)
	}
	if log.find("go build cached; go not run", "plugin=counter") == "" || log.find("go build held") != "" {
		t.Errorf("second start built again; want the first start's build from the cache:\n%s", log)
	}
}

// TestShortRunsUnderLoadFillCompileCache: three short sessions of serve,
// on a machine kept busy by spinning goroutines, with an exit wait for
// compiles far too short for any compile (--compile-wait 1ms, standing
// for a load where 10 s is too short). A compile the first run leaves
// unfinished is not thrown away run after run: the next exit waits longer
// for it, so the third run loads compiled code.
func TestShortRunsUnderLoadFillCompileCache(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a Go plugin three times")
	}
	conf, cache := counterConfig(t), t.TempDir()
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Skipf("go env GOCACHE: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	spin, stopSpin := context.WithCancel(ctx)
	defer stopSpin()
	for range 2 * goruntime.NumCPU() {
		go func() { // load; ends with stopSpin
			for n := 0; ; n++ {
				if n%1_000_000 == 0 && spin.Err() != nil {
					return
				}
			}
		}()
	}
	run := func(which string) string {
		cmd := exec.CommandContext(ctx, systest.Binary(t), "serve", "--config", conf, "--no-watch", "--compile-wait", "1ms")
		// mcphost's caches cold; go's build cache as it is.
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache, "GOCACHE="+strings.TrimSpace(string(gocache)))
		return shortSession(t, which, cmd, nil)
	}
	first := run("first")
	if strings.Contains(first, "compiles not finished at exit") &&
		!strings.Contains(first, "the next exit waits longer for these compiles") {
		t.Errorf("first run: a compile was left without saying the next exit waits longer:\n%s", first)
	}
	if strings.Contains(first, "compiles not finished at exit") {
		t.Log("first run: the compile was left unfinished at exit")
	} else {
		t.Log("first run: the compile finished within the session")
	}
	second := run("second")
	if strings.Contains(first, "compiles not finished at exit") &&
		!strings.Contains(second, "compiles an earlier exit left unfinished: waiting longer") {
		t.Errorf("second run: did not wait longer for the compile the first left:\n%s", second)
	}
	third := run("third")
	if !strings.Contains(third, `plugin module loaded on first use" plugin=counter`) || !strings.Contains(third, "code=compiled") {
		t.Errorf("third run: the plugin did not load compiled code:\nfirst:\n%s\nsecond:\n%s\nthird:\n%s", first, second, third)
	}
}
