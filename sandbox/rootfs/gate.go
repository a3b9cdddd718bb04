package rootfs

import (
	"io/fs"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// Gate decides whether the guest may use a gated mount for one operation;
// write says the operation writes. It returns 0, or the errno the guest
// sees instead of the operation's result.
type Gate func(write bool) experimentalsys.Errno

// Gated is a mount that asks a Gate before each operation on a path (an
// open, which also covers everything done through the open file; a stat,
// lstat or readlink; every change), then does exactly what f does, with
// f's confinement. A write on a read-only mount is not asked about: f
// refuses it with EROFS. Invalid paths fail as in f without asking.
//
// One open is not asked about: the mount's top (".") opened only to read,
// which the WASI runtime does for itself (wazero opens each preopen's top
// on its first use, and Go's runtime uses it while it starts). Listing that
// directory asks, as a read, at each Readdir; its own metadata (fstat) is
// what the guest sees without asking.
type Gated struct {
	*FS
	gate Gate
}

// WithGate returns f behind gate.
func (f *FS) WithGate(gate Gate) *Gated { return &Gated{FS: f, gate: gate} }

// ask runs the gate for an operation on p unless f decides it alone.
func (g *Gated) ask(p string, write bool) experimentalsys.Errno {
	if e := check(p); e != 0 {
		return e
	}
	if write && g.readOnly {
		return experimentalsys.EROFS
	}
	return g.gate(write)
}

// OpenFile implements experimentalsys.FS.
func (g *Gated) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	const writes = experimentalsys.O_RDWR | experimentalsys.O_WRONLY | experimentalsys.O_CREAT | experimentalsys.O_TRUNC | experimentalsys.O_APPEND
	if p == "." && flag&writes == 0 {
		f, e := g.FS.OpenFile(p, flag, perm)
		if e != 0 {
			return nil, e
		}
		return &gatedTop{File: f, gate: g.gate}, 0
	}
	if e := g.ask(p, flag&writes != 0); e != 0 {
		return nil, e
	}
	return g.FS.OpenFile(p, flag, perm)
}

// gatedTop is a gated mount's top, opened to read without asking; listing
// it asks.
type gatedTop struct {
	experimentalsys.File
	gate Gate
}

// Readdir implements experimentalsys.File.
func (t *gatedTop) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	if e := t.gate(false); e != 0 {
		return nil, e
	}
	return t.File.Readdir(n)
}

// Lstat implements experimentalsys.FS.
func (g *Gated) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	if e := g.ask(p, false); e != 0 {
		return sys.Stat_t{}, e
	}
	return g.FS.Lstat(p)
}

// Stat implements experimentalsys.FS.
func (g *Gated) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	if e := g.ask(p, false); e != 0 {
		return sys.Stat_t{}, e
	}
	return g.FS.Stat(p)
}

// Readlink implements experimentalsys.FS.
func (g *Gated) Readlink(p string) (string, experimentalsys.Errno) {
	if e := g.ask(p, false); e != 0 {
		return "", e
	}
	return g.FS.Readlink(p)
}

// Mkdir implements experimentalsys.FS.
func (g *Gated) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	if e := g.ask(p, true); e != 0 {
		return e
	}
	return g.FS.Mkdir(p, perm)
}

// Chmod implements experimentalsys.FS.
func (g *Gated) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	if e := g.ask(p, true); e != 0 {
		return e
	}
	return g.FS.Chmod(p, perm)
}

// Rename implements experimentalsys.FS.
func (g *Gated) Rename(from, to string) experimentalsys.Errno {
	if e := g.ask(from, true); e != 0 {
		return e
	}
	return g.FS.Rename(from, to)
}

// Rmdir implements experimentalsys.FS.
func (g *Gated) Rmdir(p string) experimentalsys.Errno {
	if e := g.ask(p, true); e != 0 {
		return e
	}
	return g.FS.Rmdir(p)
}

// Unlink implements experimentalsys.FS.
func (g *Gated) Unlink(p string) experimentalsys.Errno {
	if e := g.ask(p, true); e != 0 {
		return e
	}
	return g.FS.Unlink(p)
}

// Link implements experimentalsys.FS.
func (g *Gated) Link(oldPath, newPath string) experimentalsys.Errno {
	if e := g.ask(newPath, true); e != 0 {
		return e
	}
	return g.FS.Link(oldPath, newPath)
}

// Symlink implements experimentalsys.FS.
func (g *Gated) Symlink(target, link string) experimentalsys.Errno {
	if e := g.ask(link, true); e != 0 {
		return e
	}
	return g.FS.Symlink(target, link)
}

// Utimens implements experimentalsys.FS.
func (g *Gated) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	if e := g.ask(p, true); e != 0 {
		return e
	}
	return g.FS.Utimens(p, atim, mtim)
}
