package wasip2

import (
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"

	"github.com/mcphost/mcphost/sandbox/internal/component"
)

// Preopen is one directory shown to the guest.
type Preopen struct {
	Guest    string
	FS       experimentalsys.FS
	ReadOnly bool
}

// descriptor is a wasi:filesystem descriptor: a directory (f nil) or an
// open file, always beneath one preopen.
type descriptor struct {
	p    *Preopen
	path string // relative to the preopen, "" for its top
	f    experimentalsys.File
	dir  bool
}

func (d *descriptor) Drop() {
	if d.f != nil {
		d.f.Close()
	}
}

// errCode returns err(error-code) for the result type of hc.
func errCode(hc *component.HostCall, errno experimentalsys.Errno) any {
	t := hc.Type.Result.Err
	name := "io"
	switch errno {
	case experimentalsys.ENOENT:
		name = "no-entry"
	case experimentalsys.EACCES:
		name = "access"
	case experimentalsys.EPERM:
		name = "not-permitted"
	case experimentalsys.EROFS:
		name = "read-only"
	case experimentalsys.EISDIR:
		name = "is-directory"
	case experimentalsys.ENOTDIR:
		name = "not-directory"
	case experimentalsys.EEXIST:
		name = "exist"
	case experimentalsys.EINVAL:
		name = "invalid"
	case experimentalsys.EBADF:
		name = "bad-descriptor"
	case experimentalsys.ENOSYS:
		name = "unsupported"
	case experimentalsys.ENOTEMPTY:
		name = "not-empty"
	case experimentalsys.ELOOP:
		name = "loop"
	case experimentalsys.ENAMETOOLONG:
		name = "name-too-long"
	}
	return component.Case{Index: 1, Val: component.Case{Index: enumCase(t, name)}}
}

// addFilesystem adds wasi:filesystem: the preopens, and the descriptors
// beneath them, grouped by what a guest asks of one.
func addFilesystem(add func(iface, name string, f component.HostFunc)) {
	add("wasi:filesystem/preopens", "get-directories", func(hc *component.HostCall, _ []any) (any, error) {
		w := stateOf(hc)
		out := make([]any, len(w.Preopens))
		for i := range w.Preopens {
			out[i] = []any{&descriptor{p: &w.Preopens[i], dir: true}, w.Preopens[i].Guest}
		}
		return out, nil
	})
	m := func(name string, f component.HostFunc) { add("wasi:filesystem/types", name, f) }
	addDescriptorMetadata(m)
	m("[method]descriptor.open-at", openAt)
	addDescriptorIO(m)
	addDirectoryEntries(m)
	m("filesystem-error-code", func(*component.HostCall, []any) (any, error) { return component.Case{Index: 0}, nil })
}

// addDescriptorMetadata adds what a descriptor tells about itself or a
// path beneath it: its type, flags, stat and metadata hash.
func addDescriptorMetadata(m func(name string, f component.HostFunc)) {
	m("[method]descriptor.get-type", func(hc *component.HostCall, args []any) (any, error) {
		d := args[0].(*descriptor)
		name := "regular-file"
		if d.dir {
			name = "directory"
		}
		return ok(component.Case{Index: enumCase(hc.Type.Result.Ok, name)}), nil
	})
	m("[method]descriptor.get-flags", func(hc *component.HostCall, args []any) (any, error) {
		d := args[0].(*descriptor)
		t := hc.Type.Result.Ok
		v := uint32(1) << slices.Index(t.Names, "read")
		if !d.p.ReadOnly {
			v |= 1 << slices.Index(t.Names, "write")
			if d.dir {
				v |= 1 << slices.Index(t.Names, "mutate-directory")
			}
		}
		return ok(v), nil
	})
	m("[method]descriptor.stat", func(hc *component.HostCall, args []any) (any, error) {
		st, errno := args[0].(*descriptor).stat()
		if errno != 0 {
			return errCode(hc, errno), nil
		}
		return descriptorStat(hc, st), nil
	})
	m("[method]descriptor.stat-at", func(hc *component.HostCall, args []any) (any, error) {
		st, errno := args[0].(*descriptor).statAt(args[2].(string))
		if errno != 0 {
			return errCode(hc, errno), nil
		}
		return descriptorStat(hc, st), nil
	})
	m("[method]descriptor.metadata-hash", func(hc *component.HostCall, args []any) (any, error) {
		st, errno := args[0].(*descriptor).stat()
		if errno != 0 {
			return errCode(hc, errno), nil
		}
		return metadataHash(st), nil
	})
	m("[method]descriptor.metadata-hash-at", func(hc *component.HostCall, args []any) (any, error) {
		st, errno := args[0].(*descriptor).statAt(args[2].(string))
		if errno != 0 {
			return errCode(hc, errno), nil
		}
		return metadataHash(st), nil
	})
}

// descriptorTypeName is the descriptor-type case name for a file of mode.
func descriptorTypeName(mode fs.FileMode) string {
	switch {
	case mode.IsDir():
		return "directory"
	case mode&fs.ModeSymlink != 0:
		return "symbolic-link"
	case !mode.IsRegular():
		return "unknown"
	}
	return "regular-file"
}

// descriptorStat is ok(descriptor-stat) of st, for hc's result type.
func descriptorStat(hc *component.HostCall, st sys.Stat_t) any {
	t := hc.Type.Result.Ok
	ts := func(ns int64) any {
		return component.Case{Index: 1, Val: []any{uint64(ns / 1e9), uint64(ns % 1e9)}}
	}
	typ := component.Case{Index: enumCase(t.Fields[0].Type, descriptorTypeName(st.Mode))}
	return ok([]any{typ, st.Nlink, uint64(st.Size), ts(st.Atim), ts(st.Mtim), ts(st.Ctim)})
}

// metadataHash is ok(metadata-hash-value) of st. Not a secret: it
// identifies a file for the guest's caches, as wasmtime's (device, inode)
// hash does.
func metadataHash(st sys.Stat_t) any {
	return ok([]any{st.Dev*0x9e3779b97f4a7c15 ^ st.Ino, st.Ino*0xbf58476d1ce4e5b9 ^ uint64(st.Mtim)})
}

// openAt is descriptor.open-at: it opens a path beneath d with the
// guest's open and descriptor flags, refusing any that would write
// beneath a read-only preopen.
func openAt(hc *component.HostCall, args []any) (any, error) {
	d := args[0].(*descriptor)
	p, errno := d.join(args[2].(string))
	if errno != 0 {
		return errCode(hc, errno), nil
	}
	oflags, dflags := args[3].(uint32), args[4].(uint32)
	ot, dt := hc.Type.Params[3].Type, hc.Type.Params[4].Type
	write := flagSet(dt, dflags, "write")
	create := flagSet(ot, oflags, "create")
	trunc := flagSet(ot, oflags, "truncate")
	if d.p.ReadOnly && (write || create || trunc || flagSet(dt, dflags, "mutate-directory")) {
		return errCode(hc, experimentalsys.EROFS), nil
	}
	var flag experimentalsys.Oflag
	if write {
		flag = experimentalsys.O_RDWR
	}
	if create {
		flag |= experimentalsys.O_CREAT
	}
	if trunc {
		flag |= experimentalsys.O_TRUNC
	}
	if flagSet(ot, oflags, "exclusive") {
		flag |= experimentalsys.O_EXCL
	}
	if flagSet(ot, oflags, "directory") {
		flag |= experimentalsys.O_DIRECTORY
	}
	f, errno := d.p.FS.OpenFile(dirPath(p), flag, 0o644)
	if errno != 0 {
		return errCode(hc, errno), nil
	}
	isDir, _ := f.IsDir()
	nd := &descriptor{p: d.p, path: p, f: f, dir: isDir}
	if isDir {
		f.Close()
		nd.f = nil
	}
	return ok(nd), nil
}

// addDescriptorIO adds the reads and writes of an open file: its
// streams and read.
func addDescriptorIO(m func(name string, f component.HostFunc)) {
	m("[method]descriptor.read-via-stream", func(hc *component.HostCall, args []any) (any, error) {
		d := args[0].(*descriptor)
		if d.f == nil {
			return errCode(hc, experimentalsys.EISDIR), nil
		}
		return ok(&inputStream{r: &fileReader{f: d.f, off: int64(args[1].(uint64))}}), nil
	})
	m("[method]descriptor.write-via-stream", func(hc *component.HostCall, args []any) (any, error) {
		d := args[0].(*descriptor)
		if d.f == nil {
			return errCode(hc, experimentalsys.EISDIR), nil
		}
		if d.p.ReadOnly {
			return errCode(hc, experimentalsys.EROFS), nil
		}
		return ok(&outputStream{w: &fileWriter{f: d.f, off: int64(args[1].(uint64))}}), nil
	})
	m("[method]descriptor.append-via-stream", func(hc *component.HostCall, args []any) (any, error) {
		d := args[0].(*descriptor)
		if d.f == nil {
			return errCode(hc, experimentalsys.EISDIR), nil
		}
		if d.p.ReadOnly {
			return errCode(hc, experimentalsys.EROFS), nil
		}
		st, errno := d.f.Stat()
		if errno != 0 {
			return errCode(hc, errno), nil
		}
		return ok(&outputStream{w: &fileWriter{f: d.f, off: st.Size}}), nil
	})
	m("[method]descriptor.read", func(hc *component.HostCall, args []any) (any, error) {
		d := args[0].(*descriptor)
		if d.f == nil {
			return errCode(hc, experimentalsys.EISDIR), nil
		}
		b := make([]byte, min(args[1].(uint64), maxWrite))
		n, errno := d.f.Pread(b, int64(args[2].(uint64)))
		if errno != 0 {
			return errCode(hc, errno), nil
		}
		return ok([]any{b[:n], n == 0 && len(b) > 0}), nil
	})
}

// addDirectoryEntries adds the reading of a directory: its entry stream.
func addDirectoryEntries(m func(name string, f component.HostFunc)) {
	m("[method]descriptor.read-directory", func(hc *component.HostCall, args []any) (any, error) {
		d := args[0].(*descriptor)
		if !d.dir {
			return errCode(hc, experimentalsys.ENOTDIR), nil
		}
		f, errno := d.p.FS.OpenFile(dirPath(d.path), experimentalsys.O_DIRECTORY, 0)
		if errno != 0 {
			return errCode(hc, errno), nil
		}
		defer f.Close()
		ents, errno := f.Readdir(-1)
		if errno != 0 {
			return errCode(hc, errno), nil
		}
		return ok(&dirStream{ents: ents}), nil
	})
	m("[method]directory-entry-stream.read-directory-entry", func(hc *component.HostCall, args []any) (any, error) {
		s := args[0].(*dirStream)
		for len(s.ents) > 0 && (s.ents[0].Name == "." || s.ents[0].Name == "..") {
			s.ents = s.ents[1:]
		}
		if len(s.ents) == 0 {
			return ok(component.Case{Index: 0}), nil
		}
		e := s.ents[0]
		s.ents = s.ents[1:]
		t := hc.Type.Result.Ok.Elem
		typ := component.Case{Index: enumCase(t.Fields[0].Type, descriptorTypeName(e.Type))}
		return ok(component.Case{Index: 1, Val: []any{typ, e.Name}}), nil
	})
}

// join resolves a guest path against d, beneath d's preopen. The preopen's
// FS (rootfs) refuses any path that climbs out of it.
func (d *descriptor) join(p string) (string, experimentalsys.Errno) {
	if strings.HasPrefix(p, "/") {
		return "", experimentalsys.EPERM
	}
	return path.Join(d.path, p), 0
}

// stat is the descriptor's own: its open file's, or its directory's.
func (d *descriptor) stat() (sys.Stat_t, experimentalsys.Errno) {
	if d.f != nil {
		return d.f.Stat()
	}
	return d.p.FS.Stat(dirPath(d.path))
}

// statAt is that of p, relative to d (stat-at, metadata-hash-at).
func (d *descriptor) statAt(p string) (sys.Stat_t, experimentalsys.Errno) {
	q, errno := d.join(p)
	if errno != 0 {
		return sys.Stat_t{}, errno
	}
	return d.p.FS.Stat(dirPath(q))
}

// dirPath is the path wazero's FS wants for a relative path ("." for the top).
func dirPath(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// dirStream is a directory-entry-stream: the entries read at once.
type dirStream struct{ ents []experimentalsys.Dirent }

// HostBytes is what its handle is charged beside the handle's own cost.
func (s *dirStream) HostBytes() int64 {
	var n int64
	for _, e := range s.ents {
		n += int64(len(e.Name)) + 2*component.SlotBytes
	}
	return n
}

type fileReader struct {
	f   experimentalsys.File
	off int64
}

func (r *fileReader) Read(b []byte) (int, error) {
	n, errno := r.f.Pread(b, r.off)
	r.off += int64(n)
	if errno != 0 {
		return n, errno
	}
	if n == 0 && len(b) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

type fileWriter struct {
	f   experimentalsys.File
	off int64
}

func (w *fileWriter) Write(b []byte) (int, error) {
	n, errno := w.f.Pwrite(b, w.off)
	w.off += int64(n)
	if errno != 0 {
		return n, errno
	}
	return n, nil
}
