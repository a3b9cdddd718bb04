package rootfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// FS is one mount: a host directory seen through an [os.Root]. Paths are
// relative to the mount's top, with '/' separators, as wazero passes them;
// an absolute path or one that climbs above the top is an escape. An FS is
// safe for concurrent use.
type FS struct {
	experimentalsys.UnimplementedFS
	root     *os.Root
	guest    string
	readOnly bool
	warn     *Warner
	hidden   []string // host files no path may reach (Hide)
}

// New opens dir as a mount shown to the guest at guest (used in logs only).
// The directory descriptor stays open for the life of the FS; it is closed
// by Close, or by os.Root's finalizer once nothing refers to the FS.
func New(dir, guest string, readOnly bool, warn *Warner) (*FS, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("rootfs: %w", err)
	}
	return &FS{root: r, guest: guest, readOnly: readOnly, warn: warn}, nil
}

// Close closes the directory descriptor. Files already open stay usable.
func (f *FS) Close() error { return f.root.Close() }

// ReadOnly reports whether the mount refuses writes.
func (f *FS) ReadOnly() bool { return f.readOnly }

// String returns the host directory, for debugging.
func (f *FS) String() string { return f.root.Name() }

// isEscape reports whether err is os.Root's refusal of a path that leaves
// the root. The error is unexported, so it is recognised by its text;
// TestEscapeErrorRecognised fails if a Go release changes it.
func isEscape(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if _, ok := e.(syscall.Errno); ok {
			return false
		}
		if e.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

// errno converts err to an Errno, reporting escapes to the Warner.
func (f *FS) errno(op, p string, err error) experimentalsys.Errno {
	if err == nil {
		return 0
	}
	if isEscape(err) {
		f.refuse(op, p, "path leaves the mount")
		return experimentalsys.EPERM
	}
	return experimentalsys.UnwrapOSError(err)
}

func (f *FS) refuse(op, p, reason string) {
	f.warn.Warn(op, path.Join(f.guest, p), reason)
}

// check rejects paths os.Root would report vaguely.
func check(p string) experimentalsys.Errno {
	switch {
	case p == "":
		return experimentalsys.ENOENT
	case strings.IndexByte(p, 0) >= 0:
		return experimentalsys.EINVAL
	}
	return 0
}

// OpenFile implements experimentalsys.FS.
func (f *FS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if e := check(p); e != 0 {
		return nil, e
	}
	const writes = experimentalsys.O_CREAT | experimentalsys.O_TRUNC | experimentalsys.O_APPEND
	access := flag & (experimentalsys.O_RDONLY | experimentalsys.O_RDWR | experimentalsys.O_WRONLY)
	if f.readOnly && (access != experimentalsys.O_RDONLY || flag&writes != 0) {
		return nil, experimentalsys.EROFS
	}
	if flag&experimentalsys.O_NOFOLLOW != 0 {
		// os.Root follows a final symlink itself, so O_NOFOLLOW cannot be
		// handed to it. A link swapped in after this check is still
		// resolved inside the mount.
		if fi, err := f.root.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, experimentalsys.ELOOP
		}
	}
	of, err := f.root.OpenFile(p, osFlag(flag), perm&fs.ModePerm)
	if err != nil {
		return nil, f.errno("open", p, err)
	}
	if len(f.hidden) > 0 {
		fi, err := of.Stat()
		if err != nil {
			of.Close()
			return nil, f.errno("open", p, err)
		}
		if e := f.hide("open", p, fi); e != 0 {
			of.Close()
			return nil, e
		}
	}
	file := &file{fs: f, f: of, path: p, flag: flag}
	if flag&experimentalsys.O_DIRECTORY != 0 {
		if dir, e := file.IsDir(); e != 0 || !dir {
			of.Close()
			if e == 0 {
				e = experimentalsys.ENOTDIR
			}
			return nil, e
		}
	}
	return file, 0
}

func osFlag(flag experimentalsys.Oflag) int {
	var out int
	switch flag & (experimentalsys.O_RDONLY | experimentalsys.O_RDWR | experimentalsys.O_WRONLY) {
	case experimentalsys.O_RDWR:
		out = os.O_RDWR
	case experimentalsys.O_WRONLY:
		out = os.O_WRONLY
	default:
		out = os.O_RDONLY
	}
	for _, m := range [...]struct {
		in  experimentalsys.Oflag
		out int
	}{
		{experimentalsys.O_APPEND, os.O_APPEND},
		{experimentalsys.O_CREAT, os.O_CREATE},
		{experimentalsys.O_EXCL, os.O_EXCL},
		{experimentalsys.O_TRUNC, os.O_TRUNC},
		{experimentalsys.O_SYNC | experimentalsys.O_DSYNC | experimentalsys.O_RSYNC, os.O_SYNC},
	} {
		if flag&m.in != 0 {
			out |= m.out
		}
	}
	return out
}

// Lstat implements experimentalsys.FS.
func (f *FS) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	if e := check(p); e != 0 {
		return sys.Stat_t{}, e
	}
	fi, err := f.root.Lstat(p)
	if err != nil {
		return sys.Stat_t{}, f.errno("lstat", p, err)
	}
	if e := f.hide("lstat", p, fi); e != 0 {
		return sys.Stat_t{}, e
	}
	return sys.NewStat_t(fi), 0
}

// Stat implements experimentalsys.FS.
func (f *FS) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	if e := check(p); e != 0 {
		return sys.Stat_t{}, e
	}
	fi, err := f.root.Stat(p)
	if err != nil {
		return sys.Stat_t{}, f.errno("stat", p, err)
	}
	if e := f.hide("stat", p, fi); e != 0 {
		return sys.Stat_t{}, e
	}
	return sys.NewStat_t(fi), 0
}

// Readlink implements experimentalsys.FS. The target is returned as
// written, even when it points outside: it is only text in the mount.
func (f *FS) Readlink(p string) (string, experimentalsys.Errno) {
	if e := check(p); e != 0 {
		return "", e
	}
	t, err := f.root.Readlink(p)
	if err != nil {
		return "", f.errno("readlink", p, err)
	}
	return filepath.ToSlash(t), 0
}

// write runs a mutating call unless the mount is read-only.
func (f *FS) write(op, p string, do func() error) experimentalsys.Errno {
	if e := check(p); e != 0 {
		return e
	}
	if f.readOnly {
		return experimentalsys.EROFS
	}
	if e := f.hidePath(op, p); e != 0 {
		return e
	}
	return f.errno(op, p, do())
}

// Mkdir implements experimentalsys.FS.
func (f *FS) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	return f.write("mkdir", p, func() error { return f.root.Mkdir(p, perm&fs.ModePerm) })
}

// Chmod implements experimentalsys.FS.
func (f *FS) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	return f.write("chmod", p, func() error { return f.root.Chmod(p, perm&fs.ModePerm) })
}

// Rename implements experimentalsys.FS. Both names resolve inside the
// mount; wazero refuses renames between two mounts before calling it.
func (f *FS) Rename(from, to string) experimentalsys.Errno {
	if e := check(to); e != 0 {
		return e
	}
	return f.write("rename", from, func() error { return f.root.Rename(from, to) })
}

// Rmdir implements experimentalsys.FS.
func (f *FS) Rmdir(p string) experimentalsys.Errno {
	return f.write("rmdir", p, func() error {
		fi, err := f.root.Lstat(p)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return syscall.ENOTDIR
		}
		return f.root.Remove(p)
	})
}

// Unlink implements experimentalsys.FS.
func (f *FS) Unlink(p string) experimentalsys.Errno {
	return f.write("unlink", p, func() error {
		fi, err := f.root.Lstat(p)
		if err != nil {
			return err
		}
		if fi.IsDir() {
			return syscall.EISDIR
		}
		return f.root.Remove(p)
	})
}

// Link implements experimentalsys.FS. Both names resolve inside the
// mount, so no file from outside can be linked in; a symlink is linked as
// itself, never as its target.
func (f *FS) Link(oldPath, newPath string) experimentalsys.Errno {
	if e := check(newPath); e != 0 {
		return e
	}
	return f.write("link", oldPath, func() error { return f.root.Link(oldPath, newPath) })
}

// Symlink implements experimentalsys.FS. It refuses, with EPERM, a target
// that is absolute or that climbs above the mount as written from the
// link's directory. A link that passes can still lead out through other
// links or after being moved; resolution refuses those when followed.
func (f *FS) Symlink(target, link string) experimentalsys.Errno {
	return f.write("symlink", link, func() error {
		if reason := leaves(target, link); reason != "" {
			f.refuse("symlink", link, reason+": "+target)
			return &os.PathError{Op: "symlink", Path: link, Err: syscall.EPERM}
		}
		return f.root.Symlink(target, link)
	})
}

// leaves reports why a symlink at link with target would point outside
// the mount as written, or "".
func leaves(target, link string) string {
	switch {
	case target == "":
		return ""
	case strings.IndexByte(target, 0) >= 0:
		return ""
	case path.IsAbs(target) || filepath.IsAbs(target):
		return "absolute symlink target"
	}
	j := path.Join(path.Dir(strings.TrimSuffix(link, "/")), target)
	if j == ".." || strings.HasPrefix(j, "../") || strings.HasPrefix(j, "/") {
		return "symlink target climbs out of the mount"
	}
	return ""
}

// Utimens implements experimentalsys.FS.
func (f *FS) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	return f.write("utimens", p, func() error { return f.root.Chtimes(p, toTime(atim), toTime(mtim)) })
}

// toTime converts a WASI timestamp; UTIME_OMIT becomes the zero Time,
// which os.Chtimes leaves unchanged.
func toTime(ns int64) time.Time {
	if ns == experimentalsys.UTIME_OMIT {
		return time.Time{}
	}
	return time.Unix(0, ns)
}
