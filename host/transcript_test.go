package host

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
)

var (
	requestStateRE = regexp.MustCompile(`"requestState":"[A-Za-z0-9_.-]+"`)
	taskIDRE       = regexp.MustCompile(`"taskId":"([A-Za-z0-9_-]+)"`)
	taskTimeRE     = regexp.MustCompile(`"(createdAt|lastUpdatedAt)":"[^"]+"`)
)

var update = flag.Bool("update", false, "rewrite the out section of testdata/*.txtar")

// TestTranscripts replays testdata/*.txtar through serveLines, the
// tests' line transport over the Conn seam.
//
// Each archive has an optional "config" section (lines "plugins <set>",
// "page_size <n>", "max_message_bytes <n>", "instructions <text>",
// "cache_ttl <duration>"), an
// "in" section of client lines and an "out" section of the expected
// server lines. Lines are fed one at a time; before the next one goes in,
// the reader must have handled the line and every request it started must
// have finished (tasks included), so the output order is deterministic.
// Lines starting with "#" in "in" are comments; $TASK in a line is the
// last taskId the server sent. Run with -update to rewrite "out".
func TestTranscripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			runTranscript(t, file)
		})
	}
}

func runTranscript(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]*txtar.File{}
	for i := range ar.Files {
		sections[ar.Files[i].Name] = &ar.Files[i]
	}
	if sections["in"] == nil {
		t.Fatalf("%s: no in section", file)
	}
	opts, set := transcriptConfig(t, sections["config"])
	srv := New(loadRegistry(t, newFixture(), set), opts)
	defer srv.Close()
	got := runLines(t, srv, strings.Split(string(sections["in"].Data), "\n"))
	// A requestState carries its expiry time: the transcript shows its place.
	got = requestStateRE.ReplaceAll(got, []byte(`"requestState":"…"`))
	// Task ids are random and their times the clock's.
	got = taskIDRE.ReplaceAll(got, []byte(`"taskId":"…"`))
	got = taskTimeRE.ReplaceAll(got, []byte(`"$1":"…"`))

	if *update {
		if sections["out"] == nil {
			ar.Files = append(ar.Files, txtar.File{Name: "out"})
			sections["out"] = &ar.Files[len(ar.Files)-1]
		}
		sections["out"].Data = got
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if sections["out"] == nil {
		t.Fatalf("%s: no out section (run with -update)", file)
	}
	want := sections["out"].Data
	if !bytes.Equal(got, want) {
		t.Errorf("%s: output differs\n%s", file, lineDiff(string(want), string(got)))
	}
}

func transcriptConfig(t *testing.T, f *txtar.File) (Options, string) {
	opts := Options{Name: "mcphost-test", Version: "0.0.1", PageSize: 100, Logger: quietLog}
	set := "test"
	if f == nil {
		return opts, set
	}
	for _, line := range strings.Split(string(f.Data), "\n") {
		key, val, _ := strings.Cut(strings.TrimSpace(line), " ")
		switch key {
		case "":
		case "plugins":
			set = strings.TrimSpace(val)
		case "page_size":
			opts.PageSize, _ = strconv.Atoi(val)
		case "max_message_bytes":
			opts.MaxMessageBytes, _ = strconv.ParseInt(val, 10, 64)
		case "instructions":
			opts.Instructions = val
		case "cache_ttl":
			opts.CacheTTL, _ = time.ParseDuration(val)
		default:
			t.Fatalf("config: unknown key %q", key)
		}
	}
	return opts, set
}

// runLines feeds lines to a line session one at a time, each only after
// the previous one was fully served, and returns everything written.
func runLines(t *testing.T, srv *Server, lines []string) []byte {
	t.Helper()
	step := make(chan struct{})
	stepped := func(c *Conn) {
		c.s.wg.Wait()        // every request the line started has answered
		c.s.srv.tasks.Wait() // and every task it started has finished
		step <- struct{}{}
	}
	inR, inW := io.Pipe()
	var out lockedBuffer
	done := make(chan error, 1)
	go func() { done <- serveLines(context.Background(), srv, inR, &out, stepped) }()
	for _, line := range lines {
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if ids := taskIDRE.FindAllSubmatch(out.Bytes(), -1); len(ids) > 0 {
			line = strings.ReplaceAll(line, "$TASK", string(ids[len(ids)-1][1]))
		}
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		<-step
	}
	go func() {
		for range step { // the EOF pass calls the hook too
		}
	}()
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("serveLines: %v", err)
	}
	close(step)
	return out.Bytes()
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

// lineDiff shows the first differing line.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return "line " + strconv.Itoa(i+1) + ":\n  got:  " + gl + "\n  want: " + wl
		}
	}
	return "(no line differs)"
}
