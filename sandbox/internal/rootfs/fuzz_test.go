package rootfs

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// FuzzResolve feeds guest paths and symlink targets to a writable mount
// whose directory also holds outward links, and checks that whatever opens
// is a file of the mount: its inode must be one found by walking the mount
// without following links. Seeds are in testdata/fuzz/FuzzResolve.
func FuzzResolve(f *testing.F) {
	for _, s := range [][2]string{
		{"a.txt", "a.txt"}, {"fz", "../secret.txt"}, {"fz/x.txt", "etcdir"},
		{"sub//../..//secret.txt", ""}, {"sub/\x00/b.txt", "sub"}, {"./././fz", "/etc/hostname"},
		{"\u00e9t\u00e9/\u202e/fz", "sub/../../../x"}, {"indir/../../secret.txt", "indir/.."},
	} {
		f.Add(s[0], s[1])
	}
	base := tree(f)
	mnt := filepath.Join(base, "mnt")
	inside := map[uint64]bool{}
	filepath.Walk(mnt, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			inside[fi.Sys().(*syscall.Stat_t).Ino] = true
		}
		return nil
	})
	fsys, _ := newFS(f, mnt, false)
	f.Fuzz(func(t *testing.T, p, target string) {
		if target != "" {
			fsys.Unlink("fz")
			fsys.Symlink(target, "fz")
			defer fsys.Unlink("fz")
		}
		if st, e := fsys.Stat(p); e == 0 && !inside[st.Ino] {
			t.Fatalf("stat %q (fz -> %q) reached inode %d outside the mount", p, target, st.Ino)
		}
		file, e := fsys.OpenFile(p, experimentalsys.O_RDONLY, 0)
		if e != 0 {
			return
		}
		defer file.Close()
		if ino, _ := file.Ino(); !inside[ino] {
			t.Fatalf("open %q (fz -> %q) reached inode %d outside the mount", p, target, ino)
		}
		if dir, _ := file.IsDir(); dir {
			ents, _ := file.Readdir(-1)
			for _, ent := range ents {
				if ent.Name == "x.txt" || ent.Name == "secret.txt" {
					t.Fatalf("readdir %q (fz -> %q) lists %s from outside", p, target, ent.Name)
				}
			}
		}
	})
}
