package sandbox

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/wasmgen"
)

// TestFormatErrors: bytes that are not a loadable core module say what
// they are, in words, not in the decoder's.
func TestFormatErrors(t *testing.T) {
	t.Parallel()
	module := wasmgen.Module(wasmgen.Func{Name: "hello", Output: "hello"})
	tests := []struct {
		name   string
		wasm   []byte
		reason string
		detail string
	}{
		{"text file", []byte("# my plugin\nnot really wasm\n"), reasonNotWasm, `starts with "# my plugin\nnot "`},
		{"empty file", nil, reasonNotWasm, "empty"},
		{"part of the magic", []byte("\x00as"), reasonTruncated, "3 bytes"},
		{"magic without version", []byte("\x00asm\x01\x00"), reasonTruncated, "6 bytes"},
		{"module cut in half", module[:len(module)/2], reasonTruncated, "ran out"},
		{"module cut after its header", module[:9], reasonTruncated, "ran out"},
		{"component of another version", []byte("\x00asm\x0e\x00\x01\x00\x00"), reasonComponent, "0xe"},
		{"version 2", []byte("\x00asm\x02\x00\x00\x00"), reasonVersion, "version 2"},
		// An import whose name claims 9 bytes where 3 are left.
		{"component cut short", []byte("\x00asm\x0d\x00\x01\x00\x0a\x06\x01\x00\x09abc"), reasonMalformedComponent,
			"the import section (id 10) at byte 10: import 0 of 1: the section ends in the middle of an item"},
		{"component with a start function", []byte("\x00asm\x0d\x00\x01\x00\x09\x00"), reasonUnsupportedComponent,
			"component start functions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := testEngine.Load(context.Background(), "bad", tt.wasm, Limits{})
			if err == nil {
				m.Close(context.Background())
				t.Fatal("Load succeeded; want a FormatError")
			}
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Reason != tt.reason || !strings.Contains(err.Error(), tt.detail) {
				t.Errorf("got %v; want %q with %q", err, tt.reason, tt.detail)
			}
			fe.File = "/plugins/x.wasm"
			if got := fe.Error(); !strings.HasPrefix(got, "/plugins/x.wasm: "+tt.reason) {
				t.Errorf("with its file: %q; want it to start with the path and %q", got, tt.reason)
			}
		})
	}
}

// FuzzCheckFormat: the header check never panics, and passes only what
// starts with a version 1 core module header or the header of a component
// sandbox/internal/component reads.
func FuzzCheckFormat(f *testing.F) {
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	f.Add([]byte("\x00asm\x0d\x00\x01\x00"))
	f.Add([]byte("hello"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		err := checkFormat(b)
		ok := len(b) >= 8 && (string(b[:8]) == "\x00asm\x01\x00\x00\x00" || string(b[:8]) == "\x00asm\x0d\x00\x01\x00")
		if ok != (err == nil) {
			t.Errorf("checkFormat(%q) = %v", b, err)
		}
	})
}

func TestFuncExports(t *testing.T) {
	t.Parallel()
	one := int32(1)
	mod := wasmgen.Module(wasmgen.Func{Name: abi.ExportListTools, Output: `{}`}, wasmgen.Func{Name: abi.ExportStateless, I32: &one})
	tests := []struct {
		name    string
		wasm    []byte
		want    []string
		wantErr bool
	}{
		{"generated module", mod, []string{abi.ExportListTools, abi.ExportStateless}, false},
		{"no export section", []byte("\x00asm\x01\x00\x00\x00"), nil, false},
		{"component", []byte("\x00asm\x0d\x00\x01\x00"), nil, false},
		{"not wasm", []byte("hello world"), nil, true},
		{"truncated", mod[:len(mod)/2], nil, true},
		{"section longer than the file", []byte("\x00asm\x01\x00\x00\x00\x07\x7f\x00"), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FuncExports(tt.wasm)
			if (err != nil) != tt.wantErr {
				t.Fatalf("got error %v; want error %v", err, tt.wantErr)
			}
			if !tt.wantErr && !slices.Equal(got, tt.want) {
				t.Errorf("got %q; want %q", got, tt.want)
			}
		})
	}
}

// FuzzFuncExports: reading exports from any bytes never panics, returns
// names or an error but not both, and no name is longer than the input.
func FuzzFuncExports(f *testing.F) {
	one := int32(1)
	f.Add(wasmgen.Module(wasmgen.Func{Name: abi.ExportCallTool, Output: `{}`}, wasmgen.Func{Name: abi.ExportStateless, I32: &one}))
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x07\x05\x01\x01a\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		names, err := FuncExports(b)
		if err != nil && names != nil {
			t.Errorf("got names %q with error %v", names, err)
		}
		for _, n := range names {
			if len(n) > len(b) {
				t.Errorf("name %q longer than the input", n)
			}
		}
	})
}
