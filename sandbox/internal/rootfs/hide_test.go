package rootfs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// TestHide: a hidden file cannot be opened, stat-ed or changed through
// any name inside the mount (its own, a symlink, a hard link, after being
// replaced by a rename), read-only or not, gated or not (an allow_once
// opens nothing more); the other files can, and a listing still shows
// the name.
func TestHide(t *testing.T) {
	for _, ro := range []bool{true, false} {
		dir := t.TempDir()
		secret := filepath.Join(dir, "plugins.toml")
		for name, data := range map[string]string{"plugins.toml": "SECRET", "ok.txt": "fine"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("../plugins.toml", filepath.Join(dir, "sub", "link")); err != nil {
			t.Fatal(err)
		}
		if err := os.Link(secret, filepath.Join(dir, "hard")); err != nil {
			t.Fatal(err)
		}
		f, logs := newFS(t, dir, ro)
		f.Hide([]string{secret})
		for _, p := range []string{"plugins.toml", "sub/link", "hard", "sub/../plugins.toml"} {
			if got, e := read(f, p); e != experimentalsys.EACCES {
				t.Errorf("ro=%v: read %s = %q, %v; want EACCES", ro, p, got, e)
			}
			if _, e := f.Stat(p); e != experimentalsys.EACCES {
				t.Errorf("ro=%v: stat %s: %v; want EACCES", ro, p, e)
			}
		}
		if _, e := f.Lstat("plugins.toml"); e != experimentalsys.EACCES {
			t.Errorf("ro=%v: lstat plugins.toml: %v; want EACCES", ro, e)
		}
		if _, e := f.Lstat("sub/link"); e != 0 {
			t.Errorf("ro=%v: lstat sub/link (the link itself): %v; want it to succeed", ro, e)
		}
		// What a person allows (a may_request_paths mount, its gate open)
		// is the same mount: the hidden file stays hidden.
		g := f.WithGate(func(bool) experimentalsys.Errno { return 0 }, &Handles{})
		if _, e := g.OpenFile("sub/link", experimentalsys.O_RDONLY, 0); e != experimentalsys.EACCES {
			t.Errorf("ro=%v: open sub/link through an open gate: %v; want EACCES", ro, e)
		}
		if got, e := read(f, "ok.txt"); e != 0 || got != "fine" {
			t.Errorf("ro=%v: read ok.txt = %q, %v; want \"fine\"", ro, got, e)
		}
		if !ro {
			for op, e := range map[string]experimentalsys.Errno{
				"chmod hard":         f.Chmod("hard", 0o666),
				"link hard":          f.Link("hard", "hard2"),
				"utimens hard":       f.Utimens("hard", 0, 0),
				"open hard to write": func() experimentalsys.Errno { _, e := f.OpenFile("hard", experimentalsys.O_WRONLY, 0); return e }(),
			} {
				if e != experimentalsys.EACCES {
					t.Errorf("%s: %v; want EACCES", op, e)
				}
			}
		}
		// Replaced by a rename (a new inode), it stays hidden.
		tmp := filepath.Join(dir, ".new")
		if err := os.WriteFile(tmp, []byte("SECRET 2"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, secret); err != nil {
			t.Fatal(err)
		}
		if got, e := read(f, "plugins.toml"); e != experimentalsys.EACCES {
			t.Errorf("ro=%v: read plugins.toml after a rename = %q, %v; want EACCES", ro, got, e)
		}
		top, e := f.OpenFile(".", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
		if e != 0 {
			t.Fatal(e)
		}
		ents, _ := top.Readdir(-1)
		top.Close()
		var names []string
		for _, d := range ents {
			names = append(names, d.Name)
		}
		if !strings.Contains(strings.Join(names, ","), "plugins.toml") {
			t.Errorf("ro=%v: listing %v; want the hidden name listed", ro, names)
		}
		if !strings.Contains(logs.String(), "operator file hidden") {
			t.Errorf("ro=%v: no warning logged:\n%s", ro, logs)
		}
	}
}
