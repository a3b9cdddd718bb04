package opfile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// TestRead: one table of what an operator file can be, read through the
// one reader with a limit of 64 bytes.
func TestRead(t *testing.T) {
	const max = 64
	outside := filepath.Join(t.TempDir(), "credentials")
	if err := os.WriteFile(outside, []byte("aws_secret_access_key = hunter2"), 0o600); err != nil {
		t.Fatal(err)
	}
	type setup func(t *testing.T, dir string) string // returns the name to read
	write := func(name string, n int) setup {
		return func(t *testing.T, dir string) string {
			must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
			must(t, os.WriteFile(filepath.Join(dir, name), []byte(strings.Repeat("x", n)), 0o644))
			return name
		}
	}
	tests := []struct {
		name    string
		setup   setup
		want    int    // bytes read, when no error
		wantErr string // in the error's text
		limit   bool   // a *LimitError
		escape  bool   // an *EscapeError
	}{
		{name: "small", setup: write("a.html", 10), want: 10},
		{name: "exact limit", setup: write("a.html", max), want: max},
		{name: "empty", setup: write("a.html", 0), want: 0},
		{name: "nested", setup: write("ui/show.html", 5), want: 5},
		{name: "one over", setup: write("a.html", max+1), limit: true, wantErr: "is 65 bytes, more than the limit of 64 bytes"},
		{name: "sparse 3 GiB", setup: func(t *testing.T, dir string) string {
			f, err := os.Create(filepath.Join(dir, "big.md"))
			must(t, err)
			_, err = f.WriteAt([]byte{1}, 3<<30)
			must(t, err)
			must(t, f.Close())
			return "big.md"
		}, limit: true, wantErr: "is 3221225473 bytes"},
		{name: "symlink out", setup: func(t *testing.T, dir string) string {
			must(t, os.Mkdir(filepath.Join(dir, "ui"), 0o755))
			must(t, os.Symlink(outside, filepath.Join(dir, "ui", "show.html")))
			return "ui/show.html"
		}, escape: true, wantErr: "leads outside"},
		{name: "relative symlink out", setup: func(t *testing.T, dir string) string {
			rel, err := filepath.Rel(dir, outside)
			must(t, err)
			must(t, os.Symlink(rel, filepath.Join(dir, "page.html")))
			return "page.html"
		}, escape: true},
		{name: "directory symlinked out", setup: func(t *testing.T, dir string) string {
			must(t, os.Symlink(filepath.Dir(outside), filepath.Join(dir, "ui")))
			return "ui/credentials"
		}, escape: true},
		{name: "dot dot", setup: func(t *testing.T, dir string) string { return "../" + filepath.Base(outside) }, wantErr: "open"},
		{name: "symlink inside", setup: func(t *testing.T, dir string) string {
			write("real.html", 7)(t, dir)
			must(t, os.Symlink("real.html", filepath.Join(dir, "link.html")))
			return "link.html"
		}, want: 7},
		{name: "missing", setup: func(*testing.T, string) string { return "none.html" }, wantErr: "no such file"},
		{name: "directory", setup: func(t *testing.T, dir string) string {
			must(t, os.Mkdir(filepath.Join(dir, "d"), 0o755))
			return "d"
		}, wantErr: "not a regular file"},
		{name: "fifo", setup: func(t *testing.T, dir string) string {
			if runtime.GOOS == "windows" {
				t.Skip("no FIFOs")
			}
			must(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
			return "pipe"
		}, wantErr: "not a regular file"},
		{name: "unreadable", setup: func(t *testing.T, dir string) string {
			if os.Geteuid() == 0 {
				t.Skip("root reads a file of mode 0000")
			}
			must(t, os.WriteFile(filepath.Join(dir, "secret"), []byte("x"), 0o000))
			return "secret"
		}, wantErr: "permission denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "plugin")
			must(t, os.Mkdir(dir, 0o755))
			name := tt.setup(t, dir)
			b, fi, err := ReadIn(dir, name, max)
			if tt.wantErr == "" && !tt.limit && !tt.escape {
				if err != nil {
					t.Fatalf("got %v; want %d bytes", err, tt.want)
				}
				if len(b) != tt.want || fi.Size() != int64(tt.want) {
					t.Errorf("got %d bytes (stat %d); want %d", len(b), fi.Size(), tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("got %d bytes; want an error", len(b))
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error %q shows the outside file's content", err)
			}
			var le *LimitError
			if got := errors.As(err, &le); got != tt.limit {
				t.Errorf("got %v (LimitError %v); want LimitError %v", err, got, tt.limit)
			}
			var ee *EscapeError
			if got := errors.As(err, &ee); got != tt.escape {
				t.Errorf("got %v (EscapeError %v); want EscapeError %v", err, got, tt.escape)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("got %q; want it to say %q", err, tt.wantErr)
			}
			if (tt.limit || tt.escape) && !strings.Contains(err.Error(), filepath.Join(dir, filepath.FromSlash(name))) {
				t.Errorf("got %q; want it to name the file", err)
			}
		})
	}
}

// TestReadTree: a skill directory's files are read within a total and a
// count of entries, hidden ones and links out left alone.
func TestReadTree(t *testing.T) {
	lim := TreeLimits{Bytes: 100, Entries: 6}
	tests := []struct {
		name    string
		files   map[string]int // path → size; a size < 0 is a directory
		extra   func(t *testing.T, dir string)
		want    []string
		wantErr string
		limit   bool
	}{
		{name: "skill", files: map[string]int{"SKILL.md": 40, "ref/a.md": 30, "ref/b.md": 30}, want: []string{"SKILL.md", "ref/a.md", "ref/b.md"}},
		{name: "hidden", files: map[string]int{"SKILL.md": 10, ".git/HEAD": 1000, ".env": 1000}, want: []string{"SKILL.md"}},
		{name: "total one over", files: map[string]int{"SKILL.md": 40, "ref/a.md": 30, "ref/b.md": 31}, limit: true,
			wantErr: "ref/b.md is 31 bytes, which takes the files under"},
		{name: "too many entries", files: map[string]int{"a": 1, "b": 1, "c": 1, "d": 1, "e": 1, "f": 1, "g": 1}, limit: true,
			wantErr: "holds more than 6 directory entries"},
		{name: "entries across directories", files: map[string]int{"a/1": 1, "a/2": 1, "b/1": 1, "b/2": 1, "c/1": 1}, limit: true,
			wantErr: "more than 6"},
		{name: "exact entries", files: map[string]int{"a/1": 1, "a/2": 1, "b/1": 1, "b/2": 1}, want: []string{"a/1", "a/2", "b/1", "b/2"}},
		{name: "sparse", files: map[string]int{"SKILL.md": 1}, extra: func(t *testing.T, dir string) {
			must(t, os.Truncate(filepath.Join(dir, "SKILL.md"), 1<<30))
		}, limit: true, wantErr: "SKILL.md is 1073741824 bytes"},
		{name: "links skipped", files: map[string]int{"SKILL.md": 1}, extra: func(t *testing.T, dir string) {
			must(t, os.Symlink("/etc", filepath.Join(dir, "etc")))
			must(t, os.Symlink("/etc/passwd", filepath.Join(dir, "passwd")))
		}, want: []string{"SKILL.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for p, n := range tt.files {
				f := filepath.Join(dir, filepath.FromSlash(p))
				must(t, os.MkdirAll(filepath.Dir(f), 0o755))
				must(t, os.WriteFile(f, make([]byte, n), 0o644))
			}
			if tt.extra != nil {
				tt.extra(t, dir)
			}
			files, err := ReadTree(dir, lim)
			var le *LimitError
			if got := errors.As(err, &le); got != tt.limit {
				t.Fatalf("got %v; want LimitError %v", err, tt.limit)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v; want it to say %q", err, tt.wantErr)
				}
				if tt.limit && !strings.Contains(err.Error(), "100 bytes") && !le.Entries {
					t.Errorf("got %q; want the tree's whole limit, 100 bytes", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range files {
				got = append(got, f.Path)
				if len(f.Data) != tt.files[f.Path] {
					t.Errorf("%s: %d bytes; want %d", f.Path, len(f.Data), tt.files[f.Path])
				}
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("got %q; want %q", got, tt.want)
			}
		})
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{16 << 20: "16 MiB (16777216 bytes)", 1 << 30: "1 GiB (1073741824 bytes)", 1000: "1000 bytes", 4 << 10: "4 KiB (4096 bytes)"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q; want %q", n, got, want)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
