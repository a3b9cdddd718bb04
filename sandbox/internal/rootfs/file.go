package rootfs

import (
	"io"
	"io/fs"
	"os"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// file is one open file or directory of an FS. wazero uses a file from one
// goroutine at a time.
type file struct {
	experimentalsys.UnimplementedFile
	fs   *FS
	f    *os.File
	path string // inside the mount, for SetAppend and Utimens
	flag experimentalsys.Oflag

	statted bool
	dev     uint64
	ino     sys.Inode
	dir     bool
}

func (f *file) cache() experimentalsys.Errno {
	if f.statted {
		return 0
	}
	_, e := f.Stat()
	return e
}

// Dev implements experimentalsys.File.
func (f *file) Dev() (uint64, experimentalsys.Errno) {
	e := f.cache()
	return f.dev, e
}

// Ino implements experimentalsys.File.
func (f *file) Ino() (sys.Inode, experimentalsys.Errno) {
	e := f.cache()
	return f.ino, e
}

// IsDir implements experimentalsys.File.
func (f *file) IsDir() (bool, experimentalsys.Errno) {
	e := f.cache()
	return f.dir, e
}

// IsAppend implements experimentalsys.File.
func (f *file) IsAppend() bool { return f.flag&experimentalsys.O_APPEND != 0 }

// SetAppend implements experimentalsys.File. An os.File's append mode is
// fixed at open, so the file is opened again through the mount and kept
// only if it is still the same file.
func (f *file) SetAppend(enable bool) experimentalsys.Errno {
	if f.fs.readOnly && enable {
		return experimentalsys.EROFS
	}
	if enable == f.IsAppend() {
		return 0
	}
	flag := f.flag &^ (experimentalsys.O_CREAT | experimentalsys.O_TRUNC | experimentalsys.O_EXCL | experimentalsys.O_APPEND)
	if enable {
		flag |= experimentalsys.O_APPEND
	}
	off, err := f.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return experimentalsys.UnwrapOSError(err)
	}
	nf, err := f.fs.root.OpenFile(f.path, osFlag(flag), 0)
	if err != nil {
		return f.fs.errno("open", f.path, err)
	}
	a, err1 := f.f.Stat()
	b, err2 := nf.Stat()
	if err1 != nil || err2 != nil || !os.SameFile(a, b) {
		nf.Close()
		return experimentalsys.ENOENT
	}
	if _, err := nf.Seek(off, io.SeekStart); err != nil {
		nf.Close()
		return experimentalsys.UnwrapOSError(err)
	}
	f.f.Close()
	f.f, f.flag = nf, flag
	return 0
}

// Stat implements experimentalsys.File.
func (f *file) Stat() (sys.Stat_t, experimentalsys.Errno) {
	fi, err := f.f.Stat()
	if err != nil {
		return sys.Stat_t{}, experimentalsys.UnwrapOSError(err)
	}
	st := sys.NewStat_t(fi)
	f.statted, f.dev, f.ino, f.dir = true, st.Dev, st.Ino, fi.IsDir()
	return st, 0
}

// Read implements experimentalsys.File.
func (f *file) Read(buf []byte) (int, experimentalsys.Errno) {
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.f.Read(buf)
	return n, f.ioErr(err)
}

// Pread implements experimentalsys.File.
func (f *file) Pread(buf []byte, off int64) (int, experimentalsys.Errno) {
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.f.ReadAt(buf, off)
	return n, f.ioErr(err)
}

// ioErr maps EOF to success and a read on a directory to EISDIR.
func (f *file) ioErr(err error) experimentalsys.Errno {
	if err == nil || err == io.EOF {
		return 0
	}
	if dir, _ := f.IsDir(); dir {
		return experimentalsys.EISDIR
	}
	return experimentalsys.UnwrapOSError(err)
}

// seekOffset is int64. Naming it through an alias keeps go vet's
// stdmethods check, which wants io.Seeker's error result, from flagging
// the Errno result that wazero's File interface requires.
type seekOffset = int64

// Seek implements experimentalsys.File. Seeking a directory to 0 rewinds
// it: the next Readdir reads the directory afresh through the same
// descriptor, never by name.
func (f *file) Seek(offset seekOffset, whence int) (int64, experimentalsys.Errno) {
	n, err := f.f.Seek(offset, whence)
	return n, experimentalsys.UnwrapOSError(err)
}

// Readdir implements experimentalsys.File. Entries come from the open
// directory descriptor; names are never resolved again on the host.
func (f *file) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	ents, err := f.f.ReadDir(n)
	if err != nil && err != io.EOF {
		return nil, experimentalsys.UnwrapOSError(err)
	}
	out := make([]experimentalsys.Dirent, 0, len(ents))
	for _, e := range ents {
		out = append(out, experimentalsys.Dirent{Name: e.Name(), Type: e.Type() & fs.ModeType})
	}
	return out, 0
}

// Write implements experimentalsys.File.
func (f *file) Write(buf []byte) (int, experimentalsys.Errno) {
	if f.fs.readOnly {
		return 0, experimentalsys.EBADF
	}
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := f.f.Write(buf)
	return n, f.ioErr(err)
}

// Pwrite implements experimentalsys.File.
func (f *file) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	if f.fs.readOnly {
		return 0, experimentalsys.EBADF
	}
	n, err := f.f.WriteAt(buf, off)
	return n, f.ioErr(err)
}

// Truncate implements experimentalsys.File.
func (f *file) Truncate(size int64) experimentalsys.Errno {
	switch {
	case f.fs.readOnly:
		return experimentalsys.EBADF
	case size < 0:
		return experimentalsys.EINVAL
	}
	return f.ioErr(f.f.Truncate(size))
}

// Sync implements experimentalsys.File.
func (f *file) Sync() experimentalsys.Errno {
	if f.fs.readOnly {
		return 0
	}
	return experimentalsys.UnwrapOSError(f.f.Sync())
}

// Datasync implements experimentalsys.File.
func (f *file) Datasync() experimentalsys.Errno { return f.Sync() }

// Utimens implements experimentalsys.File. os.File cannot set times, so
// the name is resolved again inside the mount: at worst another file of
// the same mount is touched if this one was renamed since it was opened.
func (f *file) Utimens(atim, mtim int64) experimentalsys.Errno {
	if f.fs.readOnly {
		return experimentalsys.EROFS
	}
	return f.fs.errno("utimens", f.path, f.fs.root.Chtimes(f.path, toTime(atim), toTime(mtim)))
}

// Close implements experimentalsys.File.
func (f *file) Close() experimentalsys.Errno {
	return experimentalsys.UnwrapOSError(f.f.Close())
}
