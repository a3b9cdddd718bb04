package peers

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/mcphost/mcphost/internal/wasmbin"
	"github.com/mcphost/mcphost/plugins/source"
)

var (
	coldPlugins = flag.Int("coldstart.plugins", 100, "how many distinct Go plugins BenchmarkColdStart serves")
	coldRounds  = flag.String("coldstart.rounds", "cold,warm", "BenchmarkColdStart's rounds; \"warm\" alone starts on the caches a previous run left in -coldstart.dir")
	coldSection = flag.Bool("coldstart.section", false, "write the mcphost:lists section (what mcphost lists --embed writes) into the plugins BenchmarkColdStart serves")
	coldDir     = flag.String("coldstart.dir", "", "where BenchmarkColdStart writes its plugins, plugins.toml and the servers' logs, kept (for profiling by hand); \"\" means a temporary directory")
)

// BenchmarkColdStart serves many distinct Go plugins (the echo example,
// 4.2 MB, built once and made distinct by a custom section holding its
// number, so that each has its own digest and so its own compiled code
// and list cache entry) from the real `mcphost serve` over stdio, and
// reports, from process start:
//
//   - ms-to-all-listed: until a tools/list names every plugin's tool (the
//     client lists again at each list_changed);
//   - ms-first-call: one tools/call of a plugin not called yet, after the
//     list (from request to response);
//   - ms-exit (cold only): stdin closed → process gone, which includes
//     finishing the background compiles for the cache.
//
// Round "cold" starts with empty caches, "warm" with what cold left. The
// client is real-like: a reader goroutine decodes every message.
//
// With -coldstart.section each plugin carries its lists section
// (docs/lists-section.md), and a cold start lists it from there.
//
//	go test -run '^$' -bench ColdStart -benchtime 1x ./cmd/mcphost [-args -coldstart.plugins 100 -coldstart.section]
func BenchmarkColdStart(b *testing.B) {
	n := *coldPlugins
	dir := *coldDir
	if dir == "" {
		dir = b.TempDir()
	}
	cfgFile := distinctGoPlugins(b, dir, n)
	bin := systest.Binary(b)
	for i := range b.N {
		cache := filepath.Join(dir, fmt.Sprintf("cache%d", i))
		rounds := strings.Split(*coldRounds, ",")
		if rounds[0] == "cold" {
			if err := os.RemoveAll(cache); err != nil {
				b.Fatal(err)
			}
		}
		for _, round := range rounds {
			logFile := filepath.Join(dir, fmt.Sprintf("%s%d.log", round, i))
			r := startRound(b, bin, cfgFile, cache, logFile, n, fmt.Sprintf("p%03d_echo", n/2))
			b.ReportMetric(float64(r.listed.Milliseconds()), round+"-ms-to-all-listed")
			b.ReportMetric(float64(r.call.Milliseconds()), round+"-ms-first-call")
			if round == "cold" {
				b.ReportMetric(float64(r.exit.Milliseconds()), round+"-ms-exit")
			}
			fmt.Fprintf(os.Stderr, "coldstart %s: %d plugins listed after %v; first call %v; exit %v\n",
				round, n, r.listed.Round(time.Millisecond), r.call.Round(time.Millisecond), r.exit.Round(time.Millisecond))
		}
	}
}

// distinctGoPlugins builds the echo example once and writes n distinct
// copies of it, and a plugins.toml serving them as p000 … p<n-1>.
func distinctGoPlugins(b *testing.B, dir string, n int) string {
	b.Helper()
	file, err := source.BuildGo(context.Background(), "../../examples/echo", source.BuildOptions{CacheDir: filepath.Join(dir, "build")})
	if err != nil {
		b.Fatal(err)
	}
	wasm, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	if *coldSection {
		// The copies differ only in a custom section: one listing serves all.
		wasm = systest.EmbedLists(b, wasm)
	}
	var cfg strings.Builder
	cfg.WriteString("[server]\nname = \"coldstart\"\n")
	for i := range n {
		name := fmt.Sprintf("p%03d", i)
		body := append(wasmbin.AppendName(nil, "mcphost-bench-copy"), name...)
		path := filepath.Join(dir, name+".wasm")
		if err := os.WriteFile(path, wasmbin.AppendSection(append([]byte(nil), wasm...), 0, body), 0o644); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&cfg, "\n[[plugin]]\nname = %q\npath = %q\n", name, path)
	}
	cfgFile := filepath.Join(dir, "plugins.toml")
	if err := os.WriteFile(cfgFile, []byte(cfg.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	return cfgFile
}

type roundTimes struct{ listed, call, exit time.Duration }

// rpcMsg is every message the server sends, decoded.
type rpcMsg struct {
	ID     *int            `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// startRound starts mcphost serve on cfgFile with its caches in cache,
// waits until every one of n tools is listed, calls tool once, and stops
// the server.
func startRound(b *testing.B, bin, cfgFile, cache, logFile string, n int, tool string) roundTimes {
	b.Helper()
	cmd := exec.Command(bin, "serve", "--config", cfgFile, "--no-watch", "--log-level", "info", "--compile-wait", "10m")
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	stderr, err := os.Create(logFile)
	if err != nil {
		b.Fatal(err)
	}
	defer stderr.Close()
	cmd.Stderr = stderr
	w, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	fail := func(format string, args ...any) {
		b.Helper()
		w.Close()
		cmd.Process.Kill()
		cmd.Wait()
		b.Fatalf(format+" (server log: %s)", append(args, stderr.Name())...)
	}
	// The reader: decodes every line, hands responses to their caller by
	// id and list_changed notifications to changed.
	var mu sync.Mutex
	waiting := map[int]chan rpcMsg{}
	changed := make(chan struct{}, 1)
	readerDone := make(chan error, 1)
	go func() { // ends when the server closes stdout
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var m rpcMsg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				readerDone <- fmt.Errorf("undecodable line %q: %w", sc.Bytes(), err)
				return
			}
			switch {
			case m.ID != nil && m.Method == "":
				mu.Lock()
				ch := waiting[*m.ID]
				delete(waiting, *m.ID)
				mu.Unlock()
				if ch != nil {
					ch <- m
				}
			case m.Method == "notifications/tools/list_changed":
				select {
				case changed <- struct{}{}:
				default:
				}
			}
		}
		readerDone <- sc.Err()
	}()
	id := 0
	call := func(method, params string) rpcMsg {
		b.Helper()
		id++
		ch := make(chan rpcMsg, 1)
		mu.Lock()
		waiting[id] = ch
		mu.Unlock()
		if params == "" {
			params = "{}"
		}
		if _, err := fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", id, method, params); err != nil {
			fail("write: %v", err)
		}
		select {
		case m := <-ch:
			if m.Error != nil {
				fail("%s: %s", method, m.Error)
			}
			return m
		case err := <-readerDone:
			fail("%s: server output ended: %v", method, err)
		case <-time.After(10 * time.Minute):
			fail("%s: no answer in 10 minutes", method)
		}
		return rpcMsg{}
	}
	call("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`)
	fmt.Fprintln(w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	var rt roundTimes
	for {
		var list struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		}
		m := call("tools/list", "")
		if err := json.Unmarshal(m.Result, &list); err != nil {
			fail("tools/list: %v", err)
		}
		if len(list.Tools) >= n {
			rt.listed = time.Since(start)
			break
		}
		select {
		case <-changed:
		case err := <-readerDone:
			fail("waiting for list_changed (%d of %d listed): %v", len(list.Tools), n, err)
		case <-time.After(10 * time.Minute):
			fail("%d of %d listed after 10 minutes", len(list.Tools), n)
		}
	}
	t := time.Now()
	m := call("tools/call", fmt.Sprintf(`{"name":%q,"arguments":{"text":"hello"}}`, tool))
	rt.call = time.Since(t)
	if !strings.Contains(string(m.Result), "hello") {
		fail("tools/call: %s", m.Result)
	}
	t = time.Now()
	w.Close()
	if err := <-readerDone; err != nil { // stdout ends as the process exits
		fail("reading: %v", err)
	}
	if err := cmd.Wait(); err != nil {
		fail("exit: %v", err)
	}
	rt.exit = time.Since(t)
	return rt
}
