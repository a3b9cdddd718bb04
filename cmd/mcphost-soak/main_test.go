package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSoakBriefly runs the soak for a few seconds against a real mcphost
// (built without -race) serving examples/faulty, and checks what it saw:
// calls completed and none lost, every sample read the server's RSS, fds
// and goroutines, plugins.toml rewrites reloaded the plugin under the
// calls, and the slowloris connections were cut by body_timeout. Growth is
// not judged: a few seconds are all warm-up (TestVerdict covers it).
func TestSoakBriefly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcphost and the faulty example; skipped with -short")
	}
	bin := filepath.Join(t.TempDir(), "mcphost")
	if out, err := exec.Command("go", "build", "-o", bin, "../mcphost").CombinedOutput(); err != nil {
		t.Fatalf("go build mcphost: %v\n%s", err, out)
	}
	faulty := "../../examples/faulty"
	// Build and compile the plugin first (both land in the user caches), so
	// the seconds of the run go to calls, not to a cold start.
	conf := filepath.Join(t.TempDir(), "plugins.toml")
	abs, err := filepath.Abs(faulty)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("[[plugin]]\nname = \"faulty\"\nsource = \""+abs+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(bin, "validate", "--config", conf).CombinedOutput(); err != nil {
		t.Fatalf("mcphost validate: %v\n%s", err, out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var out bytes.Buffer
	rep, err := run(ctx, &out, options{bin: bin, faulty: faulty, dur: 8 * time.Second, every: 250 * time.Millisecond, reload: time.Second,
		// On a loaded machine (CI at load 30) eight seconds can pass
		// before the first call completes: the run goes on until it has
		// seen calls done and a slow body cut, within ctx's five minutes.
		until: func(c *counters) bool { return c.done.Load() > 0 && c.slowCut.Load() > 0 }})
	t.Logf("soak output:\n%s", out.Bytes())
	if err != nil {
		t.Fatalf("soak: %v", err)
	}
	if err := verdict(io.Discard, rep); err != nil {
		t.Logf("verdict (not judged on a brief run): %v", err)
	}
	if rep.done == 0 || rep.lost != 0 {
		t.Errorf("calls done %d, lost %d; want some done and none lost", rep.done, rep.lost)
	}
	if len(rep.samples) < 6 {
		t.Fatalf("got %d samples; want at least 6", len(rep.samples))
	}
	for _, s := range rep.samples {
		for _, u := range []usage{s.http, s.stdio} {
			if u.rss <= 0 || u.fds <= 0 || u.goroutines <= 0 {
				t.Fatalf("sample at %v: rss %d, fds %d, goroutines %d; want each read from the server", s.at, u.rss, u.fds, u.goroutines)
			}
		}
	}
	if rep.reloads == 0 {
		t.Errorf("servers logged no reload; want plugins.toml rewrites to reload the plugin")
	}
	if rep.slowCut == 0 {
		t.Errorf("no slowloris connection was cut within the 2s body_timeout of an 8s run")
	}
}

// TestVerdict: a resource whose whole last third is higher than its first
// fails the run; a spike does not; lost calls and a run without calls fail.
func TestVerdict(t *testing.T) {
	flat := func(n int, f func(i int) usage) []sample {
		ss := make([]sample, n)
		for i := range ss {
			ss[i] = sample{http: f(i), stdio: usage{rss: 100 << 20, goroutines: 16, fds: 12}}
		}
		return ss
	}
	steady := func(int) usage { return usage{rss: 100 << 20, goroutines: 30, fds: 20} }
	tests := []struct {
		name    string
		rep     report
		wantErr string // "" for a pass
	}{
		{"steady", report{samples: flat(30, steady), done: 10}, ""},
		{"a spike in the last third", report{samples: flat(30, func(i int) usage {
			u := steady(i)
			if i == 27 {
				u.goroutines = 5000
			}
			return u
		}), done: 10}, ""},
		{"goroutines leak", report{samples: flat(30, func(i int) usage {
			u := steady(i)
			u.goroutines += 10 * i
			return u
		}), done: 10}, "http goroutines grew"},
		{"rss leaks", report{samples: flat(30, func(i int) usage {
			u := steady(i)
			u.rss += int64(i) << 24
			return u
		}), done: 10}, "http rss MiB grew"},
		{"lost calls", report{samples: flat(30, steady), done: 10, lost: 2}, "2 calls lost"},
		{"no calls", report{samples: flat(30, steady)}, "no call completed"},
		{"too short", report{samples: flat(5, steady), done: 10}, "only 5 samples"},
	}
	for _, tt := range tests {
		err := verdict(io.Discard, tt.rep)
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("%s: verdict = %v; want a pass", tt.name, err)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%s: verdict = %v; want an error containing %q", tt.name, err, tt.wantErr)
		}
	}
}
