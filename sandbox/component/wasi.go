package component

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// WASI is one instance's WASI 0.2 state: what the guest may see and
// reach. The host fills it from the plugin's limits.
type WASI struct {
	Env    map[string]string
	Stdout io.Writer
	Stderr io.Writer
	// Preopens are the mounts, each confined by its FS (sandbox/rootfs).
	Preopens []Preopen
	// Config is what wasi:config/store reads, over Env (addConfig).
	Config map[string]string
	// HTTP sends wasi:http requests; nil refuses them all.
	HTTP HTTPDoer
	// Refused reports whether an error of HTTP is the sandbox's egress
	// refusal (allowed_hosts and the address checks, applied when HTTP
	// dials), which the guest sees as HTTP-request-denied.
	Refused func(error) bool
	// Log receives refusals; nil drops them.
	Log *slog.Logger
	// MaxHTTPBytes bounds a response body.
	MaxHTTPBytes int64
	// KV is what wasi:keyvalue serves (keyvalue.go); nil refuses to open
	// a store (access-denied).
	KV KeyValue
}

// Preopen is one directory shown to the guest.
type Preopen struct {
	Guest    string
	FS       experimentalsys.FS
	ReadOnly bool
}

// WASIHost returns the implementations of the WASI 0.2 functions mcphost
// provides, keyed by [Key]. Each reads its state from Instance.State,
// which must be a *WASI. wasi:sockets is absent on purpose: its
// functions trap when called.
func WASIHost() map[string]HostFunc {
	h := map[string]HostFunc{}
	add := func(iface, name string, f HostFunc) { h[Key(iface, name)] = f }

	// wasi:cli
	add("wasi:cli/environment", "get-environment", func(hc *HostCall, _ []any) (any, error) {
		w := wasiOf(hc)
		keys := make([]string, 0, len(w.Env))
		for k := range w.Env {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = []any{k, w.Env[k]}
		}
		return out, nil
	})
	add("wasi:cli/environment", "get-arguments", func(*HostCall, []any) (any, error) { return []any{}, nil })
	add("wasi:cli/environment", "initial-cwd", func(*HostCall, []any) (any, error) { return Case{Index: 0}, nil })
	add("wasi:cli/exit", "exit", func(hc *HostCall, args []any) (any, error) {
		code := uint32(0)
		if args[0].(Case).Index != 0 {
			code = 1
		}
		panic(sys.NewExitError(code))
	})
	add("wasi:cli/stdin", "get-stdin", func(*HostCall, []any) (any, error) { return &inputStream{}, nil })
	add("wasi:cli/stdout", "get-stdout", func(hc *HostCall, _ []any) (any, error) {
		return &outputStream{w: wasiOf(hc).Stdout}, nil
	})
	add("wasi:cli/stderr", "get-stderr", func(hc *HostCall, _ []any) (any, error) {
		return &outputStream{w: wasiOf(hc).Stderr}, nil
	})
	for _, t := range []string{"stdin", "stdout", "stderr"} {
		add("wasi:cli/terminal-"+t, "get-terminal-"+t, func(*HostCall, []any) (any, error) { return Case{Index: 0}, nil })
	}

	// wasi:clocks
	add("wasi:clocks/monotonic-clock", "now", func(*HostCall, []any) (any, error) { return uint64(monotonic()), nil })
	add("wasi:clocks/monotonic-clock", "resolution", func(*HostCall, []any) (any, error) { return uint64(1), nil })
	add("wasi:clocks/monotonic-clock", "subscribe-duration", func(_ *HostCall, args []any) (any, error) {
		return &pollable{deadline: monotonic() + int64(min(args[0].(uint64), 1<<62))}, nil
	})
	add("wasi:clocks/monotonic-clock", "subscribe-instant", func(_ *HostCall, args []any) (any, error) {
		return &pollable{deadline: int64(min(args[0].(uint64), 1<<62))}, nil
	})
	add("wasi:clocks/wall-clock", "now", func(*HostCall, []any) (any, error) {
		now := time.Now()
		return []any{uint64(now.Unix()), uint64(now.Nanosecond())}, nil
	})
	add("wasi:clocks/wall-clock", "resolution", func(*HostCall, []any) (any, error) { return []any{uint64(0), uint64(1)}, nil })

	// wasi:random
	randBytes := func(_ *HostCall, args []any) (any, error) {
		n := args[0].(uint64)
		if n > 1<<20 {
			return nil, fmt.Errorf("get-random-bytes: %d bytes asked, at most %d", n, 1<<20)
		}
		b := make([]byte, n)
		rand.Read(b)
		return b, nil
	}
	randU64 := func(*HostCall, []any) (any, error) {
		var b [8]byte
		rand.Read(b[:])
		return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56, nil
	}
	add("wasi:random/random", "get-random-bytes", randBytes)
	add("wasi:random/random", "get-random-u64", randU64)
	add("wasi:random/insecure", "get-insecure-random-bytes", randBytes)
	add("wasi:random/insecure", "get-insecure-random-u64", randU64)
	add("wasi:random/insecure-seed", "insecure-seed", func(hc *HostCall, a []any) (any, error) {
		x, _ := randU64(hc, a)
		y, _ := randU64(hc, a)
		return []any{x, y}, nil
	})

	// wasi:io
	add("wasi:io/error", "[method]error.to-debug-string", func(_ *HostCall, args []any) (any, error) {
		return args[0].(*ioError).msg, nil
	})
	add("wasi:io/poll", "[method]pollable.ready", func(_ *HostCall, args []any) (any, error) {
		return args[0].(*pollable).ready(), nil
	})
	add("wasi:io/poll", "[method]pollable.block", func(hc *HostCall, args []any) (any, error) {
		return nil, args[0].(*pollable).block(hc.Ctx)
	})
	add("wasi:io/poll", "poll", func(hc *HostCall, args []any) (any, error) {
		ps := args[0].([]any)
		if len(ps) == 0 {
			return nil, errors.New("poll: empty list")
		}
		for {
			var ready []any
			first := int64(1 << 62)
			for i, p := range ps {
				pl := p.(*pollable)
				if pl.ready() {
					ready = append(ready, uint64(i))
				}
				first = min(first, pl.deadline)
			}
			if len(ready) > 0 {
				return ready, nil
			}
			if err := (&pollable{deadline: first}).block(hc.Ctx); err != nil {
				return nil, err
			}
		}
	})
	streams := "wasi:io/streams"
	add(streams, "[method]input-stream.read", streamRead)
	add(streams, "[method]input-stream.blocking-read", streamRead)
	add(streams, "[method]input-stream.skip", streamSkip)
	add(streams, "[method]input-stream.blocking-skip", streamSkip)
	add(streams, "[method]input-stream.subscribe", func(*HostCall, []any) (any, error) { return &pollable{}, nil })
	add(streams, "[method]output-stream.check-write", func(hc *HostCall, args []any) (any, error) {
		if err := args[0].(*outputStream).err; err != nil {
			return streamFailed(hc, err), nil
		}
		return Case{Index: 0, Val: uint64(maxWrite)}, nil
	})
	write := func(hc *HostCall, args []any) (any, error) {
		return args[0].(*outputStream).write(hc, args[1].([]byte)), nil
	}
	add(streams, "[method]output-stream.write", write)
	add(streams, "[method]output-stream.blocking-write-and-flush", write)
	flush := func(hc *HostCall, args []any) (any, error) {
		if err := args[0].(*outputStream).err; err != nil {
			return streamFailed(hc, err), nil
		}
		return Case{Index: 0}, nil
	}
	add(streams, "[method]output-stream.flush", flush)
	add(streams, "[method]output-stream.blocking-flush", flush)
	zeroes := func(hc *HostCall, args []any) (any, error) {
		n := args[1].(uint64)
		if n > maxWrite {
			return nil, fmt.Errorf("write-zeroes: %d bytes, more than check-write allowed", n)
		}
		return args[0].(*outputStream).write(hc, make([]byte, n)), nil
	}
	add(streams, "[method]output-stream.write-zeroes", zeroes)
	add(streams, "[method]output-stream.blocking-write-zeroes-and-flush", zeroes)
	add(streams, "[method]output-stream.subscribe", func(*HostCall, []any) (any, error) { return &pollable{}, nil })

	addFilesystem(add)
	addConfig(add)
	addLogging(add)
	addKeyValue(add)
	addHTTP(add)
	return h
}

func wasiOf(hc *HostCall) *WASI {
	w, ok := hc.Inst.State.(*WASI)
	if !ok {
		panic(errors.New("instance has no WASI state"))
	}
	return w
}

var start = time.Now()

// monotonic is nanoseconds on the monotonic clock since the process began.
func monotonic() int64 { return int64(time.Since(start)) }

// pollable is ready once the monotonic clock passes deadline (0: at once).
type pollable struct{ deadline int64 }

func (p *pollable) ready() bool { return monotonic() >= p.deadline }

// block waits until p is ready or ctx (the call's) ends; the call then
// fails, which is how a guest asleep past its timeout is stopped.
func (p *pollable) block(ctx context.Context) error {
	d := time.Duration(p.deadline - monotonic())
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// maxWrite is what check-write allows at once.
const maxWrite = 1 << 20

// ioError is a wasi:io/error resource.
type ioError struct{ msg string }

// inputStream reads from r; a nil r is at its end at once (stdin).
type inputStream struct {
	r   io.Reader
	c   io.Closer
	eof bool
}

func (s *inputStream) drop() {
	if s.c != nil {
		s.c.Close()
	}
}

// outputStream writes to w; err is a failure that ends it.
type outputStream struct {
	w   io.Writer
	c   io.Closer
	err error
}

func (s *outputStream) drop() {
	if s.c != nil {
		s.c.Close()
	}
}

func (s *outputStream) write(hc *HostCall, b []byte) any {
	if s.err != nil {
		return streamFailed(hc, s.err)
	}
	if len(b) > maxWrite {
		s.err = fmt.Errorf("write of %d bytes, more than check-write allowed", len(b))
		return streamFailed(hc, s.err)
	}
	if s.w != nil {
		if _, err := s.w.Write(b); err != nil {
			s.err = err
			return streamFailed(hc, err)
		}
	}
	return Case{Index: 0}
}

// streamFailed is a stream-error last-operation-failed(err) result.
func streamFailed(hc *HostCall, err error) any {
	return Case{Index: 1, Val: Case{Index: 0, Val: &ioError{msg: err.Error()}}}
}

func streamClosed() any { return Case{Index: 1, Val: Case{Index: 1}} }

func streamRead(hc *HostCall, args []any) (any, error) {
	s := args[0].(*inputStream)
	n := min(args[1].(uint64), maxWrite)
	if s.r == nil || s.eof {
		return streamClosed(), nil
	}
	b := make([]byte, n)
	got, err := s.r.Read(b)
	if got == 0 && err != nil {
		if errors.Is(err, io.EOF) {
			s.eof = true
			return streamClosed(), nil
		}
		return streamFailed(hc, err), nil
	}
	return Case{Index: 0, Val: b[:got]}, nil
}

func streamSkip(hc *HostCall, args []any) (any, error) {
	res, err := streamRead(hc, args)
	if c, ok := res.(Case); ok && c.Index == 0 {
		return Case{Index: 0, Val: uint64(len(c.Val.([]byte)))}, nil
	}
	return res, err
}

// enumCase returns the case of enum (or variant) t named name.
func enumCase(t *Type, name string) uint32 {
	names := t.Names
	if t.Kind == Variant {
		for i, f := range t.Fields {
			if f.Name == name {
				return uint32(i)
			}
		}
	}
	if i := slices.Index(names, name); i >= 0 {
		return uint32(i)
	}
	trap("%s has no case %q", t, name)
	return 0
}

// flagSet reports whether flags value v has the label name.
func flagSet(t *Type, v uint32, name string) bool {
	i := slices.Index(t.Names, name)
	return i >= 0 && v&(1<<i) != 0
}

// descriptor is a wasi:filesystem descriptor: a directory (f nil) or an
// open file, always beneath one preopen.
type descriptor struct {
	p    *Preopen
	path string // relative to the preopen, "" for its top
	f    experimentalsys.File
	dir  bool
}

func (d *descriptor) drop() {
	if d.f != nil {
		d.f.Close()
	}
}

// errCode returns err(error-code) for the result type of hc.
func errCode(hc *HostCall, errno experimentalsys.Errno) any {
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
	return Case{Index: 1, Val: Case{Index: enumCase(t, name)}}
}

func ok(v any) any { return Case{Index: 0, Val: v} }

func addFilesystem(add func(iface, name string, f HostFunc)) {
	fsTypes := "wasi:filesystem/types"
	add("wasi:filesystem/preopens", "get-directories", func(hc *HostCall, _ []any) (any, error) {
		w := wasiOf(hc)
		out := make([]any, len(w.Preopens))
		for i := range w.Preopens {
			out[i] = []any{&descriptor{p: &w.Preopens[i], dir: true}, w.Preopens[i].Guest}
		}
		return out, nil
	})
	add(fsTypes, "[method]descriptor.get-type", func(hc *HostCall, args []any) (any, error) {
		d := args[0].(*descriptor)
		name := "regular-file"
		if d.dir {
			name = "directory"
		}
		return ok(Case{Index: enumCase(hc.Type.Result.Ok, name)}), nil
	})
	add(fsTypes, "[method]descriptor.get-flags", func(hc *HostCall, args []any) (any, error) {
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
	stat := func(hc *HostCall, st sys.Stat_t) any {
		t := hc.Type.Result.Ok
		typ := "regular-file"
		switch {
		case st.Mode.IsDir():
			typ = "directory"
		case st.Mode&fs.ModeSymlink != 0:
			typ = "symbolic-link"
		case !st.Mode.IsRegular():
			typ = "unknown"
		}
		ts := func(ns int64) any {
			return Case{Index: 1, Val: []any{uint64(ns / 1e9), uint64(ns % 1e9)}}
		}
		return ok([]any{Case{Index: enumCase(t.Fields[0].Type, typ)}, st.Nlink, uint64(st.Size), ts(st.Atim), ts(st.Mtim), ts(st.Ctim)})
	}
	add(fsTypes, "[method]descriptor.stat", func(hc *HostCall, args []any) (any, error) {
		st, errno := args[0].(*descriptor).stat()
		if errno != 0 {
			return errCode(hc, errno), nil
		}
		return stat(hc, st), nil
	})
	add(fsTypes, "[method]descriptor.stat-at", func(hc *HostCall, args []any) (any, error) {
		st, errno := args[0].(*descriptor).statAt(args[2].(string))
		if errno != 0 {
			return errCode(hc, errno), nil
		}
		return stat(hc, st), nil
	})
	add(fsTypes, "[method]descriptor.open-at", func(hc *HostCall, args []any) (any, error) {
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
	})
	add(fsTypes, "[method]descriptor.read-via-stream", func(hc *HostCall, args []any) (any, error) {
		d := args[0].(*descriptor)
		if d.f == nil {
			return errCode(hc, experimentalsys.EISDIR), nil
		}
		return ok(&inputStream{r: &fileReader{f: d.f, off: int64(args[1].(uint64))}}), nil
	})
	add(fsTypes, "[method]descriptor.write-via-stream", func(hc *HostCall, args []any) (any, error) {
		d := args[0].(*descriptor)
		if d.f == nil {
			return errCode(hc, experimentalsys.EISDIR), nil
		}
		if d.p.ReadOnly {
			return errCode(hc, experimentalsys.EROFS), nil
		}
		return ok(&outputStream{w: &fileWriter{f: d.f, off: int64(args[1].(uint64))}}), nil
	})
	add(fsTypes, "[method]descriptor.append-via-stream", func(hc *HostCall, args []any) (any, error) {
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
	add(fsTypes, "[method]descriptor.read", func(hc *HostCall, args []any) (any, error) {
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
	hash := func(hc *HostCall, st sys.Stat_t) any {
		// Not a secret: identifies a file for the guest's caches, as
		// wasmtime's (device, inode) hash does.
		return ok([]any{st.Dev*0x9e3779b97f4a7c15 ^ st.Ino, st.Ino*0xbf58476d1ce4e5b9 ^ uint64(st.Mtim)})
	}
	add(fsTypes, "[method]descriptor.metadata-hash", func(hc *HostCall, args []any) (any, error) {
		st, errno := args[0].(*descriptor).stat()
		if errno != 0 {
			return errCode(hc, errno), nil
		}
		return hash(hc, st), nil
	})
	add(fsTypes, "[method]descriptor.metadata-hash-at", func(hc *HostCall, args []any) (any, error) {
		st, errno := args[0].(*descriptor).statAt(args[2].(string))
		if errno != 0 {
			return errCode(hc, errno), nil
		}
		return hash(hc, st), nil
	})
	add(fsTypes, "[method]descriptor.read-directory", func(hc *HostCall, args []any) (any, error) {
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
	add(fsTypes, "[method]directory-entry-stream.read-directory-entry", func(hc *HostCall, args []any) (any, error) {
		s := args[0].(*dirStream)
		for len(s.ents) > 0 && (s.ents[0].Name == "." || s.ents[0].Name == "..") {
			s.ents = s.ents[1:]
		}
		if len(s.ents) == 0 {
			return ok(Case{Index: 0}), nil
		}
		e := s.ents[0]
		s.ents = s.ents[1:]
		typ := "regular-file"
		switch {
		case e.Type.IsDir():
			typ = "directory"
		case e.Type&fs.ModeSymlink != 0:
			typ = "symbolic-link"
		case !e.Type.IsRegular():
			typ = "unknown"
		}
		t := hc.Type.Result.Ok.Elem
		return ok(Case{Index: 1, Val: []any{Case{Index: enumCase(t.Fields[0].Type, typ)}, e.Name}}), nil
	})
	add(fsTypes, "filesystem-error-code", func(*HostCall, []any) (any, error) { return Case{Index: 0}, nil })
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

// addConfig serves wasi:config/store (and wasi:config/runtime, its
// earlier name) from the plugin's config table and its granted
// environment: wassette hands a policy's environment.allow keys to a
// component through this interface (its get-weather-js reads
// OPENWEATHER_API_KEY so), and mcphost grants them as env, so both are
// read here. A key in both is the config table's.
func addConfig(add func(iface, name string, f HostFunc)) {
	for _, iface := range []string{"wasi:config/store", "wasi:config/runtime"} {
		add(iface, "get", func(hc *HostCall, args []any) (any, error) {
			w := wasiOf(hc)
			v, found := w.Config[args[0].(string)]
			if !found {
				v, found = w.Env[args[0].(string)]
			}
			if !found {
				return ok(Case{Index: 0}), nil
			}
			return ok(Case{Index: 1, Val: v}), nil
		})
		add(iface, "get-all", func(hc *HostCall, _ []any) (any, error) {
			return ok(configPairs(wasiOf(hc))), nil
		})
	}
}

// configPairs is what wasi:config/store holds: the environment, then the
// config table over it, sorted by key.
func configPairs(w *WASI) []any {
	all := make(map[string]string, len(w.Env)+len(w.Config))
	maps.Copy(all, w.Env)
	maps.Copy(all, w.Config)
	out := make([]any, 0, len(all))
	for _, k := range slices.Sorted(maps.Keys(all)) {
		out = append(out, []any{k, all[k]})
	}
	return out
}
