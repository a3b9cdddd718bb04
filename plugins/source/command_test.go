package source

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/logtest"
)

// TestCommandStale: the build runs when the artefact is missing or older
// than a watched source; hidden files and the artefact itself never make
// it stale.
func TestCommandStale(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	old := time.Now().Add(-time.Hour)
	touch := func(name string, at time.Time) {
		t.Helper()
		if err := os.WriteFile(p(name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p(name), at, at); err != nil {
			t.Fatal(err)
		}
	}
	c := NewCommand(CommandOptions{Argv: []string{"true"}, Dir: dir, Watch: []string{p("*.c"), p("*.wasm")}, Artefact: p("a.wasm")})
	for _, step := range []struct {
		name string
		at   time.Time
		want string
	}{
		{"", time.Time{}, "no a.wasm yet"},
		{"a.wasm", old, ""},
		{"x.c", old.Add(-time.Minute), ""},
		{".x.c", time.Now(), ""},
		{"x.h", time.Now(), ""},
		{"y.c", time.Now(), "y.c is newer than a.wasm"},
	} {
		if step.name != "" {
			touch(step.name, step.at)
		}
		if got := c.stale(); got != step.want {
			t.Errorf("after writing %q: stale() = %q; want %q", step.name, got, step.want)
		}
	}
}

// TestLogBuildOutput: every line is logged as it comes, however the
// writes split it, blank lines aside, and the first 16 KiB are kept.
func TestLogBuildOutput(t *testing.T) {
	log, rec := logtest.New()
	w := LogBuildOutput(context.Background(), log, "p")
	for _, s := range []string{"a.c:1: err", "or\r\n\nsecond\nthi", "rd"} {
		w.Write([]byte(s))
	}
	w.Close()
	want := []string{"INFO plugin build output plugin=p line=a.c:1: error", "INFO plugin build output plugin=p line=second",
		"INFO plugin build output plugin=p line=third"}
	if got := rec.All(); !reflect.DeepEqual(got, want) {
		t.Errorf("logged %q; want %q", got, want)
	}
	if got, want := w.Kept(), "a.c:1: error\r\n\nsecond\nthird"; got != want {
		t.Errorf("kept %q; want %q", got, want)
	}
	big := LogBuildOutput(context.Background(), log, "p")
	big.Write([]byte(strings.Repeat("x", maxKeptOutput+10)))
	if got := big.Kept(); len(got) < maxKeptOutput || !strings.HasSuffix(got, "[… output cut at 16 KiB]") {
		t.Errorf("kept %d bytes ending %q; want 16 KiB and a note", len(got), got[len(got)-30:])
	}
}

// TestCommandNPMHint: a failed build in a Node project whose packages were
// never installed says to run npm install there; once node_modules exists
// (or without a package.json) the error is the build's alone.
func TestCommandNPMHint(t *testing.T) {
	dir := t.TempDir()
	fail := NewCommand(CommandOptions{
		Argv: []string{"sh", "-c", "echo 'sh: 1: asc: not found' >&2; exit 127"},
		Dir:  dir, Artefact: filepath.Join(dir, "p.wasm"),
	})
	hint := "run npm install in " + dir
	for _, step := range []struct {
		write string // a file or directory to create first
		want  bool
	}{
		{"", false},
		{"package.json", true},
		{"node_modules/", false},
	} {
		switch {
		case strings.HasSuffix(step.write, "/"):
			if err := os.Mkdir(filepath.Join(dir, step.write), 0o755); err != nil {
				t.Fatal(err)
			}
		case step.write != "":
			if err := os.WriteFile(filepath.Join(dir, step.write), []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := fail.Fetch(context.Background())
		if err == nil {
			t.Fatalf("after %q: the build succeeded; want its failure", step.write)
		}
		if got := strings.Contains(err.Error(), hint); got != step.want {
			t.Errorf("after %q: error %q; want the hint %q: %v", step.write, err, hint, step.want)
		}
		if !strings.Contains(err.Error(), "asc: not found") {
			t.Errorf("after %q: error %q lacks the build's output", step.write, err)
		}
	}
}
