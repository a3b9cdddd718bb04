package component

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
)

// seedComponent returns the kinds component built by
// scripts/components.sh, or nil.
func seedComponent() []byte {
	b, _ := os.ReadFile(filepath.Join(os.Getenv("MCPHOST_COMPONENTS"), "kinds.wasm"))
	return b
}

// FuzzDecode feeds the section walker untrusted bytes: it must never
// panic, and whatever it accepts must compile or fail with an error.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("\x00asm\x0d\x00\x01\x00"))
	f.Add([]byte("\x00asm\x0d\x00\x01\x00\x07\x05\x01\x40\x00\x01\x00"))
	f.Add([]byte("\x00asm\x0d\x00\x01\x00\x04\x08\x00asm\x0d\x00\x01\x00"))
	if b := seedComponent(); b != nil {
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
