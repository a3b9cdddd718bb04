package rootfs

import (
	"bytes"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// tree builds base/{secret.txt, outside/x.txt, mnt/...} where mnt holds
// files, in-mount links and outward links, and returns base.
func tree(t testing.TB) string {
	t.Helper()
	base := t.TempDir()
	mnt := filepath.Join(base, "mnt")
	for name, data := range map[string]string{
		"secret.txt":      "TOP SECRET",
		"outside/x.txt":   "TOP SECRET",
		"mnt/a.txt":       "inside",
		"mnt/sub/b.txt":   "inside b",
		"mnt/sub/c/d.txt": "inside d",
	} {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"leak":       filepath.Join(base, "secret.txt"),
		"rel":        "../secret.txt",
		"deep":       "../../../../../../../../../../etc/hostname",
		"etcdir":     filepath.Join(base, "outside"),
		"reldir":     "../outside",
		"chain1":     "chain2",
		"chain2":     "rel",
		"in":         "a.txt",
		"indir":      "sub",
		"sub/up":     "../a.txt",
		"sub/c/out":  "../../../secret.txt",
		"sub/inabs":  filepath.Join(mnt, "a.txt"), // absolute, even if inside
		"loop":       "loop",
		"indirchain": "indir/c",
	} {
		if err := os.Symlink(target, filepath.Join(mnt, link)); err != nil {
			t.Fatal(err)
		}
	}
	return base
}

// newFS mounts dir; its warnings go to the returned buffer (slog's
// handler serialises writes, and tests read it only between calls).
func newFS(t testing.TB, dir string, ro bool) (*FS, *bytes.Buffer) {
	t.Helper()
	logs := &bytes.Buffer{}
	w := NewWarner(slog.New(slog.NewTextHandler(logs, nil)), "p", 1000, 0)
	f, err := New(dir, "/w", ro, w)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, logs
}

func read(f *FS, p string) (string, experimentalsys.Errno) {
	file, e := f.OpenFile(p, experimentalsys.O_RDONLY, 0)
	if e != 0 {
		return "", e
	}
	defer file.Close()
	buf := make([]byte, 100)
	n, e := file.Read(buf)
	return string(buf[:n]), e
}

func TestEscapeErrorRecognised(t *testing.T) {
	r, err := os.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.Open("../x")
	if !isEscape(err) {
		t.Fatalf("os.Root error %v is not recognised as an escape; update isEscape", err)
	}
	if _, err := r.Open("nope"); isEscape(err) {
		t.Errorf("a missing file (%v) is taken for an escape", err)
	}
}

func TestResolve(t *testing.T) {
	base := tree(t)
	for _, ro := range []bool{false, true} {
		f, logs := newFS(t, filepath.Join(base, "mnt"), ro)
		tests := []struct {
			path   string
			want   string
			errno  experimentalsys.Errno
			warned bool
		}{
			{path: "a.txt", want: "inside"},
			{path: "./sub//b.txt", want: "inside b"},
			{path: "sub/../a.txt", want: "inside"},
			{path: "in", want: "inside"},
			{path: "indir/b.txt", want: "inside b"},
			{path: "sub/up", want: "inside"},
			{path: "indirchain/d.txt", want: "inside d"},
			{path: "indir/../a.txt", want: "inside"},
			{path: "leak", errno: experimentalsys.EPERM, warned: true},
			{path: "rel", errno: experimentalsys.EPERM, warned: true},
			{path: "deep", errno: experimentalsys.EPERM, warned: true},
			{path: "etcdir/x.txt", errno: experimentalsys.EPERM, warned: true},
			{path: "reldir/x.txt", errno: experimentalsys.EPERM, warned: true},
			{path: "chain1", errno: experimentalsys.EPERM, warned: true},
			{path: "sub/c/out", errno: experimentalsys.EPERM, warned: true},
			{path: "sub/inabs", errno: experimentalsys.EPERM, warned: true},
			{path: "../secret.txt", errno: experimentalsys.EPERM, warned: true},
			{path: "sub/../../secret.txt", errno: experimentalsys.EPERM, warned: true},
			{path: "/etc/hostname", errno: experimentalsys.EPERM, warned: true},
			{path: "loop", errno: experimentalsys.ELOOP},
			{path: "nope", errno: experimentalsys.ENOENT},
			{path: "", errno: experimentalsys.ENOENT},
			{path: "a\x00b", errno: experimentalsys.EINVAL},
		}
		for _, tt := range tests {
			before := strings.Count(logs.String(), "filesystem escape refused")
			got, e := read(f, tt.path)
			if got != tt.want || e != tt.errno {
				t.Errorf("ro=%v: read %q = %q, %v; want %q, %v", ro, tt.path, got, e, tt.want, tt.errno)
			}
			if _, se := f.Stat(tt.path); se != tt.errno {
				t.Errorf("ro=%v: stat %q: errno %v; want %v", ro, tt.path, se, tt.errno)
			}
			warned := strings.Count(logs.String(), "filesystem escape refused") > before
			if warned != tt.warned {
				t.Errorf("ro=%v: %q: warned %v; want %v\n%s", ro, tt.path, warned, tt.warned, logs)
			}
		}
		// The links themselves are data inside the mount.
		if st, e := f.Lstat("leak"); e != 0 || st.Mode&fs.ModeSymlink == 0 {
			t.Errorf("lstat leak = %v, %v; want a symlink", st.Mode, e)
		}
		if got, e := f.Readlink("rel"); got != "../secret.txt" || e != 0 {
			t.Errorf("readlink rel = %q, %v", got, e)
		}
	}
}

func TestReaddirThroughLinks(t *testing.T) {
	f, _ := newFS(t, filepath.Join(tree(t), "mnt"), true)
	if _, e := f.OpenFile("etcdir", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0); e != experimentalsys.EPERM {
		t.Errorf("open etcdir: %v; want EPERM", e)
	}
	d, e := f.OpenFile("indir", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
	if e != 0 {
		t.Fatal(e)
	}
	defer d.Close()
	var names []string
	for range 2 { // read, rewind, read again
		ents, e := d.Readdir(-1)
		if e != 0 {
			t.Fatal(e)
		}
		for _, ent := range ents {
			names = append(names, ent.Name)
		}
		if _, e := d.Seek(0, 0); e != 0 {
			t.Fatal(e)
		}
	}
	if got := strings.Join(names, ","); strings.Count(got, "b.txt") != 2 || strings.Contains(got, "x.txt") {
		t.Errorf("indir entries = %s; want sub's, twice", got)
	}
	if _, e := f.OpenFile("a.txt", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0); e != experimentalsys.ENOTDIR {
		t.Errorf("open a.txt as a directory: %v; want ENOTDIR", e)
	}
	if _, e := f.OpenFile("in", experimentalsys.O_RDONLY|experimentalsys.O_NOFOLLOW, 0); e != experimentalsys.ELOOP {
		t.Errorf("open link with O_NOFOLLOW: %v; want ELOOP", e)
	}
}

func TestReadOnly(t *testing.T) {
	base := tree(t)
	f, _ := newFS(t, filepath.Join(base, "mnt"), true)
	rofs := experimentalsys.EROFS
	tests := []struct {
		name string
		do   func() experimentalsys.Errno
		want experimentalsys.Errno
	}{
		{"open for write", func() experimentalsys.Errno {
			_, e := f.OpenFile("a.txt", experimentalsys.O_WRONLY, 0)
			return e
		}, rofs},
		{"open read-write", func() experimentalsys.Errno {
			_, e := f.OpenFile("a.txt", experimentalsys.O_RDWR, 0)
			return e
		}, rofs},
		{"create", func() experimentalsys.Errno {
			_, e := f.OpenFile("new", experimentalsys.O_RDONLY|experimentalsys.O_CREAT, 0o644)
			return e
		}, rofs},
		{"truncate on open", func() experimentalsys.Errno {
			_, e := f.OpenFile("a.txt", experimentalsys.O_RDONLY|experimentalsys.O_TRUNC, 0)
			return e
		}, rofs},
		{"append", func() experimentalsys.Errno {
			_, e := f.OpenFile("a.txt", experimentalsys.O_APPEND, 0)
			return e
		}, rofs},
		{"unlink", func() experimentalsys.Errno { return f.Unlink("a.txt") }, rofs},
		{"rename", func() experimentalsys.Errno { return f.Rename("a.txt", "b.txt") }, rofs},
		{"mkdir", func() experimentalsys.Errno { return f.Mkdir("d", 0o755) }, rofs},
		{"rmdir", func() experimentalsys.Errno { return f.Rmdir("sub/c") }, rofs},
		{"symlink", func() experimentalsys.Errno { return f.Symlink("a.txt", "l") }, rofs},
		{"link", func() experimentalsys.Errno { return f.Link("a.txt", "h") }, rofs},
		{"chmod", func() experimentalsys.Errno { return f.Chmod("a.txt", 0o777) }, rofs},
		{"set times", func() experimentalsys.Errno { return f.Utimens("a.txt", 0, 0) }, rofs},
		{"file write", fileOp(t, f, func(fl experimentalsys.File) experimentalsys.Errno {
			_, e := fl.Write([]byte("x"))
			return e
		}), experimentalsys.EBADF},
		{"file pwrite", fileOp(t, f, func(fl experimentalsys.File) experimentalsys.Errno {
			_, e := fl.Pwrite([]byte("x"), 0)
			return e
		}), experimentalsys.EBADF},
		{"file truncate", fileOp(t, f, func(fl experimentalsys.File) experimentalsys.Errno { return fl.Truncate(0) }), experimentalsys.EBADF},
		{"file set times", fileOp(t, f, func(fl experimentalsys.File) experimentalsys.Errno { return fl.Utimens(0, 0) }), rofs},
		{"file append", fileOp(t, f, func(fl experimentalsys.File) experimentalsys.Errno { return fl.SetAppend(true) }), rofs},
	}
	fi, _ := os.Stat(filepath.Join(base, "mnt", "a.txt"))
	for _, tt := range tests {
		if got := tt.do(); got != tt.want {
			t.Errorf("%s: errno %v; want %v", tt.name, got, tt.want)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(base, "mnt", "a.txt")); string(got) != "inside" {
		t.Errorf("a.txt = %q after the refused writes", got)
	}
	if fi2, _ := os.Stat(filepath.Join(base, "mnt", "a.txt")); !fi2.ModTime().Equal(fi.ModTime()) || fi2.Mode() != fi.Mode() {
		t.Errorf("a.txt metadata changed: %v %v -> %v %v", fi.ModTime(), fi.Mode(), fi2.ModTime(), fi2.Mode())
	}
}

func fileOp(t *testing.T, f *FS, op func(experimentalsys.File) experimentalsys.Errno) func() experimentalsys.Errno {
	return func() experimentalsys.Errno {
		fl, e := f.OpenFile("a.txt", experimentalsys.O_RDONLY, 0)
		if e != 0 {
			t.Fatal(e)
		}
		defer fl.Close()
		return op(fl)
	}
}

func TestWritableCannotLeave(t *testing.T) {
	base := tree(t)
	mnt := filepath.Join(base, "mnt")
	f, logs := newFS(t, mnt, false)
	eperm := experimentalsys.EPERM
	tests := []struct {
		name string
		do   func() experimentalsys.Errno
		want experimentalsys.Errno
	}{
		{"relative symlink out", func() experimentalsys.Errno { return f.Symlink("../secret.txt", "g1") }, eperm},
		{"deep symlink out", func() experimentalsys.Errno { return f.Symlink("../../../../../../etc/hostname", "sub/g2") }, eperm},
		{"absolute symlink", func() experimentalsys.Errno { return f.Symlink("/etc/hostname", "g3") }, eperm},
		{"symlink inside", func() experimentalsys.Errno { return f.Symlink("sub/b.txt", "g4") }, 0},
		{"symlink up inside", func() experimentalsys.Errno { return f.Symlink("../a.txt", "sub/g5") }, 0},
		{"symlink into an outward dir", func() experimentalsys.Errno { return f.Symlink("x", "etcdir/g6") }, eperm},
		{"hard link in", func() experimentalsys.Errno { return f.Link("a.txt", "h1") }, 0},
		{"hard link of an outward symlink", func() experimentalsys.Errno { return f.Link("leak", "h2") }, 0},
		{"hard link into an outward dir", func() experimentalsys.Errno { return f.Link("a.txt", "etcdir/h3") }, eperm},
		{"hard link from an outward dir", func() experimentalsys.Errno { return f.Link("etcdir/x.txt", "h4") }, eperm},
		{"rename into an outward dir", func() experimentalsys.Errno { return f.Rename("sub/b.txt", "reldir/stolen") }, eperm},
		{"rename from an outward dir", func() experimentalsys.Errno { return f.Rename("etcdir/x.txt", "got") }, eperm},
		{"rename up", func() experimentalsys.Errno { return f.Rename("sub/b.txt", "../stolen") }, eperm},
		{"mkdir out", func() experimentalsys.Errno { return f.Mkdir("etcdir/d", 0o755) }, eperm},
		{"unlink out", func() experimentalsys.Errno { return f.Unlink("etcdir/x.txt") }, eperm},
		{"create through a link", func() experimentalsys.Errno {
			_, e := f.OpenFile("reldir/new", experimentalsys.O_WRONLY|experimentalsys.O_CREAT, 0o644)
			return e
		}, eperm},
		{"set times out", func() experimentalsys.Errno { return f.Utimens("leak", 0, 0) }, eperm},
		{"chmod out", func() experimentalsys.Errno { return f.Chmod("leak", 0o777) }, eperm},
	}
	for _, tt := range tests {
		if got := tt.do(); got != tt.want {
			t.Errorf("%s: errno %v; want %v", tt.name, got, tt.want)
		}
	}
	if got, e := read(f, "g4"); got != "inside b" || e != 0 {
		t.Errorf("read in-mount link g4 = %q, %v", got, e)
	}
	if got, e := read(f, "sub/g5"); got != "inside" || e != 0 {
		t.Errorf("read in-mount link sub/g5 = %q, %v", got, e)
	}
	if _, e := read(f, "h2"); e != eperm {
		t.Errorf("read hard link of leak: %v; want EPERM", e)
	}
	// A link that was inside when made leads out once moved; following it
	// is refused.
	if e := f.Mkdir("m", 0o755); e != 0 {
		t.Fatal(e)
	}
	if e := f.Mkdir("m/n", 0o755); e != 0 {
		t.Fatal(e)
	}
	if e := f.Symlink("../../../secret.txt", "m/n/l"); e != eperm {
		t.Errorf("symlink m/n/l: %v; want EPERM", e)
	}
	if e := f.Symlink("../../a.txt", "m/n/l"); e != 0 {
		t.Fatal(e)
	}
	if e := f.Rename("m/n", "n"); e != 0 {
		t.Fatal(e)
	}
	if _, e := read(f, "n/l"); e != eperm {
		t.Errorf("read moved link: %v; want EPERM", e)
	}
	ents, _ := os.ReadDir(filepath.Join(base, "outside"))
	if len(ents) != 1 {
		t.Errorf("outside holds %d entries; want only x.txt", len(ents))
	}
	if _, err := os.Stat(filepath.Join(base, "stolen")); err == nil {
		t.Errorf("a file was moved out of the mount")
	}
	for _, want := range []string{"plugin=p", "op=symlink", "path=/w/g1", `reason="symlink target climbs out of the mount: ../secret.txt"`, `reason="absolute symlink target: /etc/hostname"`, "op=rename", `reason="path leaves the mount"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %s:\n%s", want, logs)
		}
	}
}

func TestWritableWorks(t *testing.T) {
	f, _ := newFS(t, t.TempDir(), false)
	fl, e := f.OpenFile("new.txt", experimentalsys.O_RDWR|experimentalsys.O_CREAT|experimentalsys.O_EXCL, 0o644)
	if e != 0 {
		t.Fatal(e)
	}
	if _, e := fl.Write([]byte("hello")); e != 0 {
		t.Fatal(e)
	}
	if e := fl.SetAppend(true); e != 0 {
		t.Fatal(e)
	}
	if _, e := fl.Write([]byte("!")); e != 0 {
		t.Fatal(e)
	}
	if e := fl.Utimens(1e18, experimentalsys.UTIME_OMIT); e != 0 {
		t.Fatal(e)
	}
	if e := fl.Close(); e != 0 {
		t.Fatal(e)
	}
	if st, e := f.Stat("new.txt"); e != 0 || st.Atim != 1e18 {
		t.Errorf("stat = %+v, %v; want atim 1e18", st, e)
	}
	if got, e := read(f, "new.txt"); got != "hello!" || e != 0 {
		t.Errorf("read = %q, %v; want hello!", got, e)
	}
	steps := []struct {
		name string
		e    experimentalsys.Errno
		want experimentalsys.Errno
	}{
		{"mkdir", f.Mkdir("d", 0o755), 0},
		{"rename", f.Rename("new.txt", "d/moved.txt"), 0},
		{"unlink a dir", f.Unlink("d"), experimentalsys.EISDIR},
		{"rmdir a file", f.Rmdir("d/moved.txt"), experimentalsys.ENOTDIR},
		{"rmdir non-empty", f.Rmdir("d"), experimentalsys.ENOTEMPTY},
		{"unlink", f.Unlink("d/moved.txt"), 0},
		{"rmdir", f.Rmdir("d"), 0},
	}
	for _, s := range steps {
		if s.e != s.want {
			t.Errorf("%s: %v; want %v", s.name, s.e, s.want)
		}
	}
}

// TestGated: each operation on a gated mount asks the gate, as a read or
// a write, before the mount's own checks; a refusal is the gate's errno; a
// write on a read-only mount and an invalid path fail without asking; the
// top opens to read without asking, and listing it asks.
func TestGated(t *testing.T) {
	tests := []struct {
		name   string
		ro     bool
		refuse bool
		op     func(g *Gated) experimentalsys.Errno
		asked  []bool // the write of each question
		want   experimentalsys.Errno
	}{
		{name: "read", op: func(g *Gated) experimentalsys.Errno {
			f, e := g.OpenFile("a.txt", experimentalsys.O_RDONLY, 0)
			if e == 0 {
				f.Close()
			}
			return e
		}, asked: []bool{false}},
		{name: "read refused", refuse: true, op: func(g *Gated) experimentalsys.Errno {
			_, e := g.OpenFile("a.txt", experimentalsys.O_RDONLY, 0)
			return e
		}, asked: []bool{false}, want: experimentalsys.EACCES},
		{name: "create", op: func(g *Gated) experimentalsys.Errno {
			f, e := g.OpenFile("new.txt", experimentalsys.O_WRONLY|experimentalsys.O_CREAT, 0o644)
			if e == 0 {
				f.Close()
			}
			return e
		}, asked: []bool{true}},
		{name: "create on ro", ro: true, op: func(g *Gated) experimentalsys.Errno {
			_, e := g.OpenFile("new.txt", experimentalsys.O_WRONLY|experimentalsys.O_CREAT, 0o644)
			return e
		}, want: experimentalsys.EROFS},
		{name: "mkdir on ro", ro: true, op: func(g *Gated) experimentalsys.Errno { return g.Mkdir("d", 0o755) }, want: experimentalsys.EROFS},
		{name: "stat", op: func(g *Gated) experimentalsys.Errno { _, e := g.Stat("a.txt"); return e }, asked: []bool{false}},
		{name: "stat refused", refuse: true, op: func(g *Gated) experimentalsys.Errno { _, e := g.Stat("a.txt"); return e },
			asked: []bool{false}, want: experimentalsys.EACCES},
		{name: "unlink", op: func(g *Gated) experimentalsys.Errno { return g.Unlink("in") }, asked: []bool{true}},
		{name: "escape allowed stays refused", op: func(g *Gated) experimentalsys.Errno {
			_, e := g.OpenFile("leak", experimentalsys.O_RDONLY, 0)
			return e
		}, asked: []bool{false}, want: experimentalsys.EPERM},
		{name: "dotdot allowed stays refused", op: func(g *Gated) experimentalsys.Errno { _, e := g.Stat("../secret.txt"); return e },
			asked: []bool{false}, want: experimentalsys.EPERM},
		{name: "invalid path", op: func(g *Gated) experimentalsys.Errno { _, e := g.Stat(""); return e }, want: experimentalsys.ENOENT},
		{name: "top opens without asking", refuse: true, op: func(g *Gated) experimentalsys.Errno {
			f, e := g.OpenFile(".", experimentalsys.O_RDONLY, 0)
			if e == 0 {
				f.Close()
			}
			return e
		}},
		{name: "listing the top asks", refuse: true, op: func(g *Gated) experimentalsys.Errno {
			f, e := g.OpenFile(".", experimentalsys.O_RDONLY, 0)
			if e != 0 {
				return e
			}
			defer f.Close()
			_, e = f.Readdir(-1)
			return e
		}, asked: []bool{false}, want: experimentalsys.EACCES},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := newFS(t, filepath.Join(tree(t), "mnt"), tc.ro)
			var asked []bool
			g := f.WithGate(func(write bool) experimentalsys.Errno {
				asked = append(asked, write)
				if tc.refuse {
					return experimentalsys.EACCES
				}
				return 0
			}, nil)
			if got := tc.op(g); got != tc.want {
				t.Errorf("got errno %v; want %v", got, tc.want)
			}
			if !slices.Equal(asked, tc.asked) {
				t.Errorf("the gate was asked %v; want %v", asked, tc.asked)
			}
		})
	}
}

// TestGatedExpire: a file a gated mount opened after asking refuses every
// use once its Handles are revoked (the call that was allowed ended), for
// reading and writing alike, and closes without error; the mount's top,
// opened without asking, is not held.
func TestGatedExpire(t *testing.T) {
	dir := filepath.Join(tree(t), "mnt")
	f, _ := newFS(t, dir, false)
	var h Handles
	g := f.WithGate(func(bool) experimentalsys.Errno { return 0 }, &h)
	r, e := g.OpenFile("a.txt", experimentalsys.O_RDONLY, 0)
	if e != 0 {
		t.Fatalf("open a.txt: %v", e)
	}
	w, e := g.OpenFile("new.txt", experimentalsys.O_RDWR|experimentalsys.O_CREAT, 0o644)
	if e != 0 {
		t.Fatalf("open new.txt: %v", e)
	}
	closed, e := g.OpenFile("a.txt", experimentalsys.O_RDONLY, 0)
	if e != 0 {
		t.Fatalf("open a.txt: %v", e)
	}
	if e := closed.Close(); e != 0 {
		t.Fatalf("close: %v", e)
	}
	top, e := g.OpenFile(".", experimentalsys.O_RDONLY, 0)
	if e != 0 {
		t.Fatalf("open .: %v", e)
	}
	defer top.Close()
	buf := make([]byte, 16)
	if n, e := r.Read(buf); e != 0 || n == 0 {
		t.Fatalf("read before revoke: %d, %v", n, e)
	}
	if n := h.Expire(); n != 2 {
		t.Errorf("Expire closed %d files; want 2 (the guest closed the third)", n)
	}
	uses := []struct {
		name string
		use  func() experimentalsys.Errno
	}{
		{"read", func() experimentalsys.Errno { _, e := r.Read(buf); return e }},
		{"pread", func() experimentalsys.Errno { _, e := r.Pread(buf, 0); return e }},
		{"seek", func() experimentalsys.Errno { _, e := r.Seek(0, 0); return e }},
		{"stat", func() experimentalsys.Errno { _, e := r.Stat(); return e }},
		{"write", func() experimentalsys.Errno { _, e := w.Write([]byte("x")); return e }},
		{"pwrite", func() experimentalsys.Errno { _, e := w.Pwrite([]byte("x"), 0); return e }},
		{"truncate", func() experimentalsys.Errno { return w.Truncate(0) }},
		{"sync", func() experimentalsys.Errno { return w.Sync() }},
	}
	for _, u := range uses {
		if e := u.use(); e != experimentalsys.EACCES {
			t.Errorf("%s after revoke: errno %v; want EACCES", u.name, e)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "new.txt")); err != nil || len(b) != 0 {
		t.Errorf("new.txt holds %q, %v; want it empty", b, err)
	}
	for _, c := range []experimentalsys.File{r, w} {
		if e := c.Close(); e != 0 {
			t.Errorf("close after revoke: %v; want success", e)
		}
	}
	if _, e := top.Readdir(-1); e != 0 {
		t.Errorf("the top after revoke: %v; want it still open (the gate allows)", e)
	}
	if n := h.Expire(); n != 0 {
		t.Errorf("a second Expire closed %d files; want 0", n)
	}
}
