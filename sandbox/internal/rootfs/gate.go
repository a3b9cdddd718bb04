package rootfs

import (
	"io/fs"
	"sync"
	"sync/atomic"

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
//
// Every file an asked open returns is held in the Gated's [Handles] (when
// it has one): the gate's answer covers the call it was given in, and
// whoever ends that call revokes the files, which then refuse every use
// with EACCES, as a refused path does. A guest that keeps a descriptor
// across calls must open it again, and is asked again.
type Gated struct {
	*FS
	gate    Gate
	handles *Handles
}

// WithGate returns f behind gate; the files it opens after asking are
// held in h (nil: not held, for a gate that refuses everything).
func (f *FS) WithGate(gate Gate, h *Handles) *Gated { return &Gated{FS: f, gate: gate, handles: h} }

// Handles are the files gated mounts opened after asking their gate, until
// Expire. It is safe for concurrent use; the zero value holds nothing.
type Handles struct {
	mu    sync.Mutex
	files []*heldFile
	some  atomic.Bool // files is not empty: Expire, at every call's end, locks only then
}

// hold wraps f so that Expire can end it.
func (h *Handles) hold(f experimentalsys.File) experimentalsys.File {
	if h == nil {
		return f
	}
	hf := &heldFile{File: f}
	h.mu.Lock()
	h.files = append(h.files, hf)
	h.some.Store(true)
	h.mu.Unlock()
	return hf
}

// Expire closes every file held, and returns how many the guest had not
// closed itself. From then on each of them fails every use with EACCES;
// closing one succeeds.
func (h *Handles) Expire() int {
	if !h.some.Load() {
		return 0 // as if it ran before any hold still under way
	}
	h.mu.Lock()
	files := h.files
	h.files = nil
	h.some.Store(false)
	h.mu.Unlock()
	n := 0
	for _, f := range files {
		if f.revoke() {
			n++
		}
	}
	return n
}

// heldFile is a file opened under a gate's answer; once revoked it is
// closed on the host and refuses everything but Close.
type heldFile struct {
	experimentalsys.File
	closed  atomic.Bool // by the guest, or by revoke
	revoked atomic.Bool
}

// revoke closes the file unless the guest did; it reports whether it did.
func (f *heldFile) revoke() bool {
	f.revoked.Store(true)
	if f.closed.Swap(true) {
		return false
	}
	_ = f.File.Close()
	return true
}

// Close implements experimentalsys.File.
func (f *heldFile) Close() experimentalsys.Errno {
	if f.closed.Swap(true) {
		return 0
	}
	return f.File.Close()
}

// gone is the errno of any use of a revoked file.
func (f *heldFile) gone() experimentalsys.Errno {
	if f.revoked.Load() {
		return experimentalsys.EACCES
	}
	return 0
}

// Dev implements experimentalsys.File.
func (f *heldFile) Dev() (uint64, experimentalsys.Errno) {
	if e := f.gone(); e != 0 {
		return 0, e
	}
	return f.File.Dev()
}

// Ino implements experimentalsys.File.
func (f *heldFile) Ino() (sys.Inode, experimentalsys.Errno) {
	if e := f.gone(); e != 0 {
		return 0, e
	}
	return f.File.Ino()
}

// IsDir implements experimentalsys.File.
func (f *heldFile) IsDir() (bool, experimentalsys.Errno) {
	if e := f.gone(); e != 0 {
		return false, e
	}
	return f.File.IsDir()
}

// SetAppend implements experimentalsys.File.
func (f *heldFile) SetAppend(enable bool) experimentalsys.Errno {
	if e := f.gone(); e != 0 {
		return e
	}
	return f.File.SetAppend(enable)
}

// Stat implements experimentalsys.File.
func (f *heldFile) Stat() (sys.Stat_t, experimentalsys.Errno) {
	if e := f.gone(); e != 0 {
		return sys.Stat_t{}, e
	}
	return f.File.Stat()
}

// Read implements experimentalsys.File.
func (f *heldFile) Read(buf []byte) (int, experimentalsys.Errno) {
	if e := f.gone(); e != 0 {
		return 0, e
	}
	return f.File.Read(buf)
}

// Pread implements experimentalsys.File.
func (f *heldFile) Pread(buf []byte, off int64) (int, experimentalsys.Errno) {
	if e := f.gone(); e != 0 {
		return 0, e
	}
	return f.File.Pread(buf, off)
}

// Seek implements experimentalsys.File.
func (f *heldFile) Seek(offset seekOffset, whence int) (int64, experimentalsys.Errno) {
	if e := f.gone(); e != 0 {
		return 0, e
	}
	return f.File.Seek(offset, whence)
}

// Readdir implements experimentalsys.File.
func (f *heldFile) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	if e := f.gone(); e != 0 {
		return nil, e
	}
	return f.File.Readdir(n)
}

// Write implements experimentalsys.File.
func (f *heldFile) Write(buf []byte) (int, experimentalsys.Errno) {
	if e := f.gone(); e != 0 {
		return 0, e
	}
	return f.File.Write(buf)
}

// Pwrite implements experimentalsys.File.
func (f *heldFile) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	if e := f.gone(); e != 0 {
		return 0, e
	}
	return f.File.Pwrite(buf, off)
}

// Truncate implements experimentalsys.File.
func (f *heldFile) Truncate(size int64) experimentalsys.Errno {
	if e := f.gone(); e != 0 {
		return e
	}
	return f.File.Truncate(size)
}

// Sync implements experimentalsys.File.
func (f *heldFile) Sync() experimentalsys.Errno {
	if e := f.gone(); e != 0 {
		return e
	}
	return f.File.Sync()
}

// Datasync implements experimentalsys.File.
func (f *heldFile) Datasync() experimentalsys.Errno {
	if e := f.gone(); e != 0 {
		return e
	}
	return f.File.Datasync()
}

// Utimens implements experimentalsys.File.
func (f *heldFile) Utimens(atim, mtim int64) experimentalsys.Errno {
	if e := f.gone(); e != 0 {
		return e
	}
	return f.File.Utimens(atim, mtim)
}

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
	f, e := g.FS.OpenFile(p, flag, perm)
	if e != 0 {
		return nil, e
	}
	return g.handles.hold(f), 0
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
