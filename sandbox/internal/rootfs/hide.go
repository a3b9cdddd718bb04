package rootfs

import (
	"log/slog"
	"os"
	"path"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// Hide makes the host files paths unreachable through f, whatever name
// leads to them inside the mount (their own, a symlink that stays inside,
// another hard link): opening one, stat-ing it or changing it fails with
// EACCES and is logged ("operator file hidden"). A listing still shows
// the names. Files are compared by identity (device and inode), looked up
// again at each check, so a file replaced by a rename (the grants file
// is written so) stays hidden. Call Hide before f is used.
//
// It is for files a read-only mount may hold but no plugin may read;
// package sandbox knows only the list (sandbox.Limits.Hidden).
func (f *FS) Hide(paths []string) { f.hidden = paths }

// isHidden reports whether fi is one of the hidden files.
func (f *FS) isHidden(fi os.FileInfo) bool {
	for _, p := range f.hidden {
		if st, err := os.Stat(p); err == nil && os.SameFile(fi, st) {
			return true
		}
	}
	return false
}

// hide refuses op on the guest path p when fi is a hidden file.
func (f *FS) hide(op, p string, fi os.FileInfo) experimentalsys.Errno {
	if len(f.hidden) == 0 || fi == nil || !f.isHidden(fi) {
		return 0
	}
	f.warn.Log("operator file hidden", slog.String("op", op), slog.String("path", path.Join(f.guest, p)))
	return experimentalsys.EACCES
}

// hidePath is hide for a path not opened: its own entry (not what a
// final symlink names, which an open or stat of it checks).
func (f *FS) hidePath(op, p string) experimentalsys.Errno {
	if len(f.hidden) == 0 {
		return 0
	}
	fi, err := f.root.Lstat(p)
	if err != nil {
		return 0 // the operation itself reports it
	}
	return f.hide(op, p, fi)
}
