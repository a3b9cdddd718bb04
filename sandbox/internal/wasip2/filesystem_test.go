package wasip2

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcphost/mcphost/sandbox/internal/component"
	"github.com/mcphost/mcphost/sandbox/internal/rootfs"
)

// WIT types as a guest declares them (wasi:filesystem@0.2.12), for the
// host functions that build results by case name.
var (
	fsErrorCode = enum("access", "would-block", "already", "bad-descriptor", "busy", "deadlock", "quota", "exist",
		"file-too-large", "illegal-byte-sequence", "in-progress", "interrupted", "invalid", "io", "is-directory", "loop",
		"too-many-links", "message-size", "name-too-long", "no-device", "no-entry", "no-lock", "insufficient-memory",
		"insufficient-space", "not-directory", "not-empty", "not-recoverable", "unsupported", "no-tty", "no-such-device",
		"overflow", "not-permitted", "pipe", "read-only", "invalid-seek", "text-file-busy", "cross-device")
	descriptorType  = enum("unknown", "block-device", "character-device", "directory", "fifo", "symbolic-link", "regular-file", "socket")
	descriptorFlags = &component.Type{Kind: component.Flags, Names: []string{"read", "write", "file-integrity-sync",
		"data-integrity-sync", "requested-write-sync", "mutate-directory"}}
	openFlags = &component.Type{Kind: component.Flags, Names: []string{"create", "directory", "exclusive", "truncate"}}
	u64       = &component.Type{Kind: component.U64}
	str       = &component.Type{Kind: component.String}
)

func enum(names ...string) *component.Type {
	return &component.Type{Kind: component.Enum, Names: names}
}

func result(ok, err *component.Type) *component.Type {
	return &component.Type{Kind: component.Result, Ok: ok, Err: err}
}

func record(types ...*component.Type) *component.Type {
	t := &component.Type{Kind: component.Record}
	for _, ft := range types {
		t.Fields = append(t.Fields, component.Field{Type: ft})
	}
	return t
}

// hostCall calls the host function iface#name as a guest whose import
// has type ft would, on inst.
func hostCall(t *testing.T, inst *component.Instance, ft *component.FuncType, iface, name string, args ...any) any {
	t.Helper()
	f := Host()[component.Key(iface, name)]
	if f == nil {
		t.Fatalf("%s#%s is not served", iface, name)
	}
	out, err := f(&component.HostCall{Ctx: context.Background(), Inst: inst, Type: ft}, args)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// errName is the error-code a result names, or "" when it is ok.
func errName(t *testing.T, res any) string {
	t.Helper()
	c := res.(component.Case)
	if c.Index == 0 {
		return ""
	}
	return fsErrorCode.Names[c.Val.(component.Case).Index]
}

// TestFilesystem runs wasi:filesystem's functions on two preopens of one
// directory (sandbox/internal/rootfs mounts, as the sandbox gives them), one
// read-only: what a guest may open, read, write and list, and the
// error-code each refusal is. Both mounts are writable underneath, so the
// read-only preopen's refusals are this package's own (rootfs refuses
// them again on a read-only mount).
func TestFilesystem(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	var pre []Preopen
	for _, ro := range []bool{false, true} {
		fs, err := rootfs.New(dir, "/data", false, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { fs.Close() })
		pre = append(pre, Preopen{Guest: "/data", FS: fs, ReadOnly: ro})
	}
	inst := testInstance(t, 1<<20, &State{Preopens: pre})
	const types = "wasi:filesystem/types"

	dirs := hostCall(t, inst, &component.FuncType{}, "wasi:filesystem/preopens", "get-directories").([]any)
	if len(dirs) != 2 || dirs[0].([]any)[1] != "/data" {
		t.Fatalf("get-directories: %v", dirs)
	}
	rw, ro := dirs[0].([]any)[0].(*descriptor), dirs[1].([]any)[0].(*descriptor)

	openAt := &component.FuncType{
		Params: []component.Field{{Name: "self"}, {Name: "path-flags"}, {Name: "path", Type: str},
			{Name: "open-flags", Type: openFlags}, {Name: "flags", Type: descriptorFlags}},
		Result: result(nil, fsErrorCode),
	}
	open := func(d *descriptor, p string, oflags, dflags uint32) any {
		return hostCall(t, inst, openAt, types, "[method]descriptor.open-at", d, uint32(0), p, oflags, dflags)
	}
	const (
		read, write   = 1 << 0, 1 << 1
		create, trunc = 1 << 0, 1 << 3
	)
	for _, tt := range []struct {
		name           string
		d              *descriptor
		path           string
		oflags, dflags uint32
		want           string // error-code, "" for ok
	}{
		{"a file", rw, "a.txt", 0, read, ""},
		{"a directory", ro, "sub", 0, read, ""},
		{"an absolute path", rw, "/etc/passwd", 0, read, "not-permitted"},
		{"a missing file", rw, "missing", 0, read, "no-entry"},
		{"a file, writable, on a read-only mount", ro, "a.txt", 0, read | write, "read-only"},
		{"creating on a read-only mount", ro, "new.txt", create, read, "read-only"},
		{"truncating on a read-only mount", ro, "a.txt", trunc, read, "read-only"},
		{"a new file", rw, "new.txt", create, read | write, ""},
	} {
		if got := errName(t, open(tt.d, tt.path, tt.oflags, tt.dflags)); got != tt.want {
			t.Errorf("open-at %s (%s): %q, want %q", tt.path, tt.name, got, tt.want)
		}
	}
	if errName(t, open(rw, "../x", create, read|write)) == "" {
		t.Error("open-at ../x created a file outside the mount")
	}
	if _, err := os.Stat(filepath.Join(dir, "..", "x")); err == nil {
		t.Error("../x exists beside the mount")
	}

	// Reading a file through a stream, from an offset, to its end.
	f := open(rw, "a.txt", 0, read).(component.Case).Val.(*descriptor)
	defer f.Drop()
	s := hostCall(t, inst, &component.FuncType{Result: result(nil, fsErrorCode)}, types, "[method]descriptor.read-via-stream", f, uint64(1)).(component.Case).Val.(*inputStream)
	if got := hostCall(t, inst, &component.FuncType{}, "wasi:io/streams", "[method]input-stream.read", s, uint64(100)).(component.Case); got.Index != 0 || string(got.Val.([]byte)) != "ello" {
		t.Errorf("read from offset 1: %v, want ok(ello)", got)
	}
	if got := hostCall(t, inst, &component.FuncType{}, "wasi:io/streams", "[method]input-stream.read", s, uint64(100)).(component.Case); got.Index != 1 || got.Val.(component.Case).Index != 1 {
		t.Errorf("read at the end: %v, want err(closed)", got)
	}

	// Writing one through a stream, on the writable mount only.
	viaStream := &component.FuncType{Result: result(nil, fsErrorCode)}
	n := open(rw, "new.txt", 0, read|write).(component.Case).Val.(*descriptor)
	defer n.Drop()
	w := hostCall(t, inst, viaStream, types, "[method]descriptor.write-via-stream", n, uint64(0)).(component.Case).Val.(*outputStream)
	if got := hostCall(t, inst, &component.FuncType{}, "wasi:io/streams", "[method]output-stream.write", w, []byte("abc")).(component.Case); got.Index != 0 {
		t.Errorf("write: %v", got)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "new.txt")); string(b) != "abc" {
		t.Errorf("new.txt holds %q, want abc", b)
	}
	roFile := open(ro, "a.txt", 0, read).(component.Case).Val.(*descriptor)
	defer roFile.Drop()
	if got := errName(t, hostCall(t, inst, viaStream, types, "[method]descriptor.write-via-stream", roFile, uint64(0))); got != "read-only" {
		t.Errorf("write-via-stream on a read-only mount: %q, want read-only", got)
	}
	if got := errName(t, hostCall(t, inst, viaStream, types, "[method]descriptor.read-via-stream", rw, uint64(0))); got != "is-directory" {
		t.Errorf("read-via-stream of a directory: %q, want is-directory", got)
	}

	// Flags, stat and listing.
	flags := &component.FuncType{Result: result(descriptorFlags, fsErrorCode)}
	for _, tt := range []struct {
		d    *descriptor
		want uint32
	}{{rw, 1<<0 | 1<<1 | 1<<5}, {ro, 1 << 0}, {f, 1<<0 | 1<<1}} {
		if got := hostCall(t, inst, flags, types, "[method]descriptor.get-flags", tt.d).(component.Case).Val; got != tt.want {
			t.Errorf("get-flags of %q (read-only %v): %b, want %b", tt.d.path, tt.d.p.ReadOnly, got, tt.want)
		}
	}
	statAt := &component.FuncType{Result: result(record(descriptorType, u64, u64), fsErrorCode)}
	for _, tt := range []struct {
		path, typ string
		size      uint64
	}{{"a.txt", "regular-file", 5}, {"sub", "directory", 0}} {
		st := hostCall(t, inst, statAt, types, "[method]descriptor.stat-at", rw, uint32(0), tt.path).(component.Case).Val.([]any)
		if got := descriptorType.Names[st[0].(component.Case).Index]; got != tt.typ || (tt.typ == "regular-file" && st[2] != tt.size) {
			t.Errorf("stat-at %s: %s of %v bytes, want %s of %d", tt.path, got, st[2], tt.typ, tt.size)
		}
	}
	ds := hostCall(t, inst, &component.FuncType{Result: result(nil, fsErrorCode)}, types, "[method]descriptor.read-directory", ro).(component.Case).Val.(*dirStream)
	entry := &component.FuncType{Result: result(&component.Type{Kind: component.Option, Elem: record(descriptorType, str)}, fsErrorCode)}
	var got []string
	for {
		c := hostCall(t, inst, entry, types, "[method]directory-entry-stream.read-directory-entry", ds).(component.Case).Val.(component.Case)
		if c.Index == 0 {
			break
		}
		e := c.Val.([]any)
		got = append(got, e[1].(string)+" "+descriptorType.Names[e[0].(component.Case).Index])
	}
	slices.Sort(got)
	if want := []string{"a.txt regular-file", "new.txt regular-file", "sub directory"}; !slices.Equal(got, want) {
		t.Errorf("read-directory: %q, want %q", got, want)
	}
}
