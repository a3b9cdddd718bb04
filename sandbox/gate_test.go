package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// pathConsent answers every path reach with err and records each one.
type pathConsent struct {
	err   error
	mu    sync.Mutex
	asked []Reach
}

func (c *pathConsent) Allow(ctx context.Context, r Reach) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = append(c.asked, r)
	return c.err
}

// TestGatedMount: a may_request_paths mount asks Consent at a call's first
// read or write under it, and the guest reads or writes only what Consent
// allows; a read-only mount refuses writes without asking, and a symlink
// out of the mount stays refused after Consent allows.
func TestGatedMount(t *testing.T) {
	t.Parallel()
	needGuest(t)
	tests := []struct {
		name    string
		export  string
		file    string // under the mount
		ro      bool
		none    bool // no Consent
		answer  error
		wantOut string // "" means the call fails
		wantErr string // a substring of the failure
		asked   []bool // the Write of each reach Consent was asked about
		logged  bool   // a refusal naming allowed_paths is logged
	}{
		{name: "read allowed", export: "read", file: "a.txt", wantOut: "inside", asked: []bool{false}},
		{name: "read denied", export: "read", file: "a.txt", answer: errors.New("a person said no"),
			wantErr: "permission denied", asked: []bool{false}, logged: true},
		{name: "write allowed", export: "write", file: "new.txt", wantOut: "ok", asked: []bool{true}},
		{name: "write on ro refused without asking", export: "write", file: "new.txt", ro: true,
			wantErr: "read-only file system"},
		{name: "read on ro allowed", export: "read", file: "a.txt", ro: true, wantOut: "inside", asked: []bool{false}},
		{name: "no one to ask", export: "read", file: "a.txt", none: true, wantErr: "permission denied", logged: true},
		{name: "symlink out refused after allowing", export: "read", file: "leak",
			wantErr: "operation not permitted", asked: []bool{false}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			dir := filepath.Join(base, "mnt")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("inside"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(base, "secret.txt"), []byte("secret"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../secret.txt", filepath.Join(dir, "leak")); err != nil {
				t.Fatal(err)
			}
			c := &pathConsent{err: tc.answer}
			lim := Limits{Instances: 1, MayRequestPaths: []Mount{{Host: dir, Guest: "/g", ReadOnly: tc.ro}}, Consent: c}
			if tc.none {
				lim.Consent = nil
			}
			m := load(t, lim)
			out, err := m.Call(context.Background(), tc.export, []byte("/g/"+tc.file))
			if tc.wantOut != "" {
				if err != nil || string(out) != tc.wantOut {
					t.Fatalf("got %q, %v; want %q", out, err, tc.wantOut)
				}
			} else if err == nil || !strings.Contains(strings.ToLower(err.Error()), tc.wantErr) {
				t.Fatalf("got %q, %v; want an error containing %q", out, err, tc.wantErr)
			}
			c.mu.Lock()
			asked := c.asked
			c.mu.Unlock()
			if len(asked) != len(tc.asked) {
				t.Fatalf("Consent was asked %v; want %d reaches", asked, len(tc.asked))
			}
			for i, r := range asked {
				if r.Plugin != t.Name() || r.Path != dir || r.Write != tc.asked[i] || r.Host != "" {
					t.Errorf("asked %+v; want plugin %q, path %q, write %v", r, t.Name(), dir, tc.asked[i])
				}
			}
			if got := testLogs.LineContains(`path=`+dir, `key=allowed_paths`); got != tc.logged {
				t.Errorf("refusal naming allowed_paths logged: %v; want %v", got, tc.logged)
			}
			if tc.export == "write" && tc.wantOut == "" {
				if _, err := os.Stat(filepath.Join(dir, tc.file)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("the refused write left %s: %v", tc.file, err)
				}
			}
		})
	}
}

// TestGatedMountAnswerPerCall: within one call a gated mount is asked
// about once; the next call asks again (keeping an answer is Consent's
// business), and between calls nothing can use it.
func TestGatedMountAnswerPerCall(t *testing.T) {
	t.Parallel()
	needGuest(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("inside"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := &pathConsent{}
	m := load(t, Limits{Instances: 1, MayRequestPaths: []Mount{{Host: dir, Guest: "/g"}}, Consent: c})
	for i := range 2 {
		if out, err := m.Call(context.Background(), "read", []byte("/g/a.txt")); err != nil || string(out) != "inside" {
			t.Fatalf("call %d: got %q, %v", i, out, err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.asked) != 2 {
		t.Errorf("asked %v; want once per call", c.asked)
	}
}

// TestGatedMountKeptFile: a file a guest opened under a gated mount in
// one call, and keeps open, is closed when the call ends: in the next
// call reading it and writing it fail as a refused path does (EACCES),
// whatever Consent would now answer, and nothing is asked; the file is
// unchanged.
func TestGatedMountKeptFile(t *testing.T) {
	t.Parallel()
	needGuest(t)
	for _, tc := range []struct {
		name   string
		answer error // Consent's answer in the second call
	}{
		{"then denied", errors.New("a person said no")},
		{"then allowed", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			file := filepath.Join(dir, "a.txt")
			if err := os.WriteFile(file, []byte("inside"), 0o644); err != nil {
				t.Fatal(err)
			}
			c := &pathConsent{}
			m := load(t, Limits{Instances: 1, MayRequestPaths: []Mount{{Host: dir, Guest: "/g"}}, Consent: c})
			if out, err := m.Call(context.Background(), "keep", []byte("/g/a.txt")); err != nil || string(out) != "inside" {
				t.Fatalf("call 1 (keep): got %q, %v; want the file", out, err)
			}
			c.mu.Lock()
			c.err = tc.answer
			c.mu.Unlock()
			for _, export := range []string{"readkept", "writekept"} {
				out, err := m.Call(context.Background(), export, []byte("overwritten"))
				if err == nil || !strings.Contains(strings.ToLower(err.Error()), "permission denied") {
					t.Errorf("%s in a later call: got %q, %v; want permission denied", export, out, err)
				}
			}
			c.mu.Lock()
			asked := len(c.asked)
			c.mu.Unlock()
			if asked != 1 {
				t.Errorf("Consent was asked %d times; want once (the open in call 1)", asked)
			}
			if b, err := os.ReadFile(file); err != nil || string(b) != "inside" {
				t.Errorf("the file holds %q, %v; want it unchanged", b, err)
			}
		})
	}
}

// TestComponentGatedMount: a component's wasi:filesystem preopen from
// may_request_paths goes through the same gate as a core module's.
func TestComponentGatedMount(t *testing.T) {
	wasm := componentWasm(t, "kinds")
	mnt := t.TempDir()
	if err := os.WriteFile(filepath.Join(mnt, "note.txt"), []byte("from the file"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		answer  error
		isError bool
		text    string
	}{
		{"allowed", nil, false, "from the file"},
		{"denied", errors.New("a person said no"), true, "open:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &pathConsent{err: tc.answer}
			m, err := testEngine.Load(context.Background(), t.Name(), wasm, Limits{Instances: 1, Timeout: 2 * time.Second, MemoryPages: 64,
				MayRequestPaths: []Mount{{Host: mnt, Guest: "/data", ReadOnly: true}}, Consent: c})
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close(context.Background())
			res, err := componentCall(t, m, "read-file", `{"path":"/data/note.txt"}`)
			if err != nil || res.IsError != tc.isError || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, tc.text) {
				t.Errorf("read-file = %+v, %v; want isError %v and %q", res, err, tc.isError, tc.text)
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			if len(c.asked) != 1 || c.asked[0].Path != mnt || c.asked[0].Write {
				t.Errorf("asked %+v; want one read of %s", c.asked, mnt)
			}
		})
	}
}
