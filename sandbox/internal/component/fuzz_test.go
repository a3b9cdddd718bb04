package component

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
)

// seedComponents returns the components scripts/components.sh built
// (MCPHOST_COMPONENTS: from C, JavaScript and the text format), up to
// 1 MiB each: the JavaScript one (12 MB) would make each fuzz input
// take seconds.
func seedComponents(f *testing.F) [][]byte {
	dir := os.Getenv("MCPHOST_COMPONENTS")
	if dir == "" {
		return nil
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.wasm"))
	var out [][]byte
	for _, file := range files {
		if fi, err := os.Lstat(file); err != nil || fi.Mode()&os.ModeSymlink != 0 {
			continue // name.wasm links to name-<hash>.wasm: the same bytes
		}
		b, err := os.ReadFile(file)
		if err == nil && IsComponent(b) && len(b) <= 1<<20 {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		f.Logf("no components in MCPHOST_COMPONENTS=%s; seeding with hand-made ones only", dir)
	}
	return out
}

// FuzzDecode feeds the section walker untrusted bytes: it must never
// panic, and whatever it accepts must compile or fail with an error.
// Seeds: hand-made components for each name form, nesting and a refused
// built-in, and every component the tests build.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("\x00asm\x0d\x00\x01\x00"))
	f.Add([]byte("\x00asm\x0d\x00\x01\x00\x07\x05\x01\x40\x00\x01\x00"))
	f.Add([]byte("\x00asm\x0d\x00\x01\x00\x04\x08\x00asm\x0d\x00\x01\x00"))
	types := sec(7, vec(funcTypeU32))
	for _, name := range [][]byte{
		slices.Concat([]byte{0x00}, str("f")),
		slices.Concat([]byte{0x01}, str("wasi:logging/logging")),
		slices.Concat([]byte{0x02}, str("wasi:http/types@0.2"), vec(slices.Concat([]byte{0x01}, str(".3")))),
	} {
		f.Add(asm(types, sec(10, vec(slices.Concat(name, []byte{0x01, 0x00}))),
			sec(11, vec(slices.Concat(name, []byte{0x01, 0x00, 0x00})))))
	}
	child := asm(sec(1, []byte("\x00asm\x01\x00\x00\x00")), sec(2, vec([]byte{0x00, 0x00, 0x00})))
	f.Add(asm(sec(4, child), sec(5, vec(instantiate0, instantiate0))))
	f.Add(asm(sec(4, asm(sec(4, child), sec(5, vec(instantiate0)))), sec(5, vec(instantiate0, instantiate0))))
	for _, b := range seedComponents(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Decode(b)
		if err != nil || len(b) > 4<<10 {
			// Compiling a real component's modules takes seconds in the
			// interpreter; large inputs check decoding only.
			return
		}
		ctx := context.Background()
		rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
		defer rt.Close(ctx)
		if cp, err := Compile(ctx, rt, c, nil, nil); err == nil {
			cp.Tools()
		}
	})
}

func TestDecodeRefuses(t *testing.T) {
	for _, tt := range []struct {
		name string
		wasm string
		want string
	}{
		{"core module", "\x00asm\x01\x00\x00\x00", "not a component"},
		{"start section", "\x00asm\x0d\x00\x01\x00\x09\x00", "unsupported: component start functions"},
		{"value section", "\x00asm\x0d\x00\x01\x00\x0c\x00", "unsupported: component value sections"},
		{"core type section", "\x00asm\x0d\x00\x01\x00\x03\x00", "unsupported: core type sections"},
		{"WIT package", "\x00asm\x0d\x00\x01\x00\x07\x03\x01\x41\x00", "unsupported: a WIT package in binary form"},
		{"component type beside code", "\x00asm\x0d\x00\x01\x00\x01\x08\x00asm\x01\x00\x00\x00\x07\x03\x01\x41\x00",
			"unsupported: component types"},
		{"stream type", "\x00asm\x0d\x00\x01\x00\x07\x03\x01\x66\x00", "unsupported: stream types"},
		{"async lift", "\x00asm\x0d\x00\x01\x00\x08\x02\x01\x08", "unsupported: canonical built-in 0x08"},
		{"nested component's start section", "\x00asm\x0d\x00\x01\x00\x04\x0a\x00asm\x0d\x00\x01\x00\x09\x00",
			"unsupported: component start functions"},
		{"truncated", "\x00asm\x0d\x00\x01\x00\x07\x05\x01", "cut short"},
	} {
		_, err := Decode([]byte(tt.wasm))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

// TestTypeDAG builds a type that doubles at every level, as a hostile
// component may: its size saturates, and writing it stays short.
func TestTypeDAG(t *testing.T) {
	ty := prims[0x7d] // u8
	for range 60 {
		r := &Type{Kind: Record, Fields: []Field{{"a", ty}, {"b", ty}}}
		r.layout = computeLayout(r)
		ty = r
	}
	if ty.layout.nodes != maxNodes {
		t.Errorf("nodes = %d, want the cap %d", ty.layout.nodes, maxNodes)
	}
	if s := ty.String(); len(s) > 400 {
		t.Errorf("String() is %d bytes: %.80s…", len(s), s)
	}
}
