package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"

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
// sandbox/component reads.
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
