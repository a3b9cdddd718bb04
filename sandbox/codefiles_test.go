package sandbox

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"testing/iotest"

	"github.com/tetratelabs/wazero"

	"github.com/mcphost/mcphost/internal/cachefile"
	"github.com/mcphost/mcphost/internal/wasmbin"
	"github.com/mcphost/mcphost/internal/wasmgen"
	"github.com/mcphost/mcphost/sandbox/internal/looppoll"
)

// TestHookCodeFiles: the wazero this module builds with still has the
// field hookCodeFiles sets (a wazero that moved it fails here, not in
// the field), hooking twice wraps once, a cache without a directory is
// refused, and an entry a hooked cache reads comes through codeReader.
func TestHookCodeFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, err := wazero.NewCompilationCacheWithDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := hookCodeFiles(c); err != nil {
			t.Fatalf("hookCodeFiles: %v", err)
		}
	}
	files := codeFilesOf(t, c)
	h, ok := files.(hugeCodeFiles)
	if !ok {
		t.Fatalf("cache's directory is a %T; want hugeCodeFiles", files)
	}
	if _, twice := h.wazeroFiles.(hugeCodeFiles); twice {
		t.Errorf("hooking twice wrapped twice")
	}
	if err := hookCodeFiles(wazero.NewCompilationCache()); err != errNoCodeFiles {
		t.Errorf("in-memory cache: %v; want errNoCodeFiles", err)
	}

	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCompilationCache(c))
	defer rt.Close(ctx)
	if _, err := rt.CompileModule(ctx, wasmgen.Module(wasmgen.Func{Name: "f", Output: "f"})); err != nil {
		t.Fatal(err)
	}
	var entry string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && !cachefile.IsLeftover(d.Name()) {
			entry = p
		}
		return err
	})
	var key [32]byte
	if b, err := hex.DecodeString(filepath.Base(entry)); err != nil || len(b) != len(key) {
		t.Fatalf("no entry named by its key in %s (%q)", dir, entry)
	} else {
		copy(key[:], b)
	}
	rc, ok, err := h.Get(key)
	if err != nil || !ok {
		t.Fatalf("Get(%x): %v, %v", key, ok, err)
	}
	defer rc.Close()
	if _, isCode := rc.(*codeReader); !isCode {
		t.Errorf("Get returned a %T; want *codeReader", rc)
	}
	got, err := io.ReadAll(rc)
	want, _ := os.ReadFile(entry)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("entry read through codeReader: %d bytes, %v; want the file's %d", len(got), err, len(want))
	}
}

// codeFilesOf is the directory behind c, read as hookCodeFiles reads it.
func codeFilesOf(t *testing.T, c wazero.CompilationCache) wazeroFiles {
	t.Helper()
	field := reflect.ValueOf(c).Elem().FieldByName("fileCache")
	if !field.IsValid() {
		t.Fatal("wazero's cache has no fileCache field")
	}
	files, _ := reflect.NewAt(field.Type(), field.Addr().UnsafePointer()).Elem().Interface().(wazeroFiles)
	return files
}

// TestCodeReader: reads are whole however the file underneath returns
// them (wazero reads 8-byte offsets with a bare Read and takes a short
// one for the end), and the machine code read, into memory of a fresh
// mapping advised for huge pages where there are any, arrives intact.
func TestCodeReader(t *testing.T) {
	t.Parallel()
	data := make([]byte, 3*hugePage+12345)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	cr := newCodeReader(io.NopCloser(iotest.HalfReader(bytes.NewReader(data))))
	var off [8]byte
	for i := range 3 {
		if n, err := cr.Read(off[:]); n != 8 || err != nil || !bytes.Equal(off[:], data[8*i:8*i+8]) {
			t.Fatalf("offset %d: %d bytes, %v", i, n, err)
		}
	}
	code, free, err := mapLarge(len(data) - 24)
	if err != nil {
		t.Skipf("no anonymous mapping: %v", err)
	}
	defer free()
	if n, err := cr.Read(code); n != len(code) || err != nil || !bytes.Equal(code, data[24:]) {
		t.Fatalf("machine code: %d of %d bytes, %v", n, len(code), err)
	}
	if !cr.advised {
		t.Errorf("the machine code's read was not advised")
	}
	if n, err := cr.Read(off[:1]); n != 0 || err != io.EOF {
		t.Errorf("read past the end: %d, %v; want 0, EOF", n, err)
	}
}

// TestReadLarge: a file of megabytes (outside the heap where there is a
// mapping to read into) and a small one read back as written, and a
// missing one is an error.
func TestReadLarge(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	for _, size := range []int{0, 100, hugePage - 1, hugePage, 2*hugePage + 4097} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(r.Uint32())
		}
		file := filepath.Join(dir, "f")
		if err := os.WriteFile(file, data, 0o600); err != nil {
			t.Fatal(err)
		}
		got, free, err := readLarge(file)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%d bytes: read %d, %v", size, len(got), err)
		}
		if free == nil {
			t.Fatalf("%d bytes: nil free", size)
		}
		free()
	}
	if _, _, err := readLarge(filepath.Join(dir, "missing")); err == nil {
		t.Errorf("missing file: no error")
	}
}

// TestLoadKeptGoGuest: the Go test guest loaded from what an Engine
// kept of it (its prepared module read outside the heap and freed once
// compiled, its machine code read through hugeCodeFiles) runs: nothing
// kept the freed bytes.
func TestLoadKeptGoGuest(t *testing.T) {
	t.Parallel()
	needGuest(t)
	ctx := context.Background()
	engine := func() *Engine {
		// The shared Engine's directory holds the guest's compiled code.
		e, err := NewEngine(ctx, EngineOptions{CacheDir: testEngine.CacheDir(), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		e.cache.prepared = preparedID("TestLoadKeptGoGuest")
		return e
	}
	e := engine()
	m, err := e.Load(ctx, "first", guestWasm, Limits{Instances: 1})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	m.Close(ctx)
	e.Close(ctx)
	e = engine()
	defer e.Close(ctx)
	if m, err = e.LoadKept(ctx, "kept", cachefile.Sum(guestWasm), Limits{Instances: 1}); err != nil {
		t.Fatalf("LoadKept: %v", err)
	}
	defer m.Close(ctx)
	for range 3 {
		if out, err := m.Call(ctx, "echo", []byte("kept")); err != nil || string(out) != "kept" {
			t.Fatalf("echo: %q, %v", out, err)
		}
	}
}

// TestKeptLoadNeverTiered: a kept load whose compiled code went between
// LoadKept's look and the load (a prune) compiles now, on an Engine that
// would start new code on the interpreter: its bytes are freed when
// LoadKept returns, so no background compile may hold them.
func TestKeptLoadNeverTiered(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e, err := NewEngine(ctx, EngineOptions{CacheDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler), InterpretUntilCompiled: true})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	wasm := wasmgen.Module(wasmgen.Func{Name: "hello", Output: "hello"})
	code, _, err := looppoll.Instrument(wasmbin.MergeData(wasm)) // as prepared
	if err != nil {
		t.Fatal(err)
	}
	sum := cachefile.Sum(wasm)
	use := e.cache.getKey(sum[:32], slog.New(slog.DiscardHandler))
	if use.hasCode() {
		t.Fatal("a new directory has code")
	}
	m, err := e.Load(withKept(ctx, code, use), "kept", code, Limits{InterpretFirst: true, Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	if m.Stats().Interpreted {
		t.Errorf("a kept load started on the interpreter")
	}
	if out, err := m.Call(ctx, "hello", nil); err != nil || string(out) != "hello" {
		t.Errorf("hello: %q, %v", out, err)
	}
}
