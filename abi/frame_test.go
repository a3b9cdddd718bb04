package abi

import (
	"bytes"
	"testing"
)

// TestCallFrame: a frame parses back into the fields it was built from,
// and every truncation of one is refused, never read past its end.
func TestCallFrame(t *testing.T) {
	tests := []struct {
		name string
		f    CallFrame
	}{
		{"full", CallFrame{Name: []byte("echo"), ID: []byte(`"req-1"`), Meta: []byte(`{"progressToken":5}`),
			ProtocolVersion: []byte("2025-11-25"), Plugin: []byte("p"), Arguments: []byte(`{"text":"hi"}`)}},
		{"no arguments", CallFrame{Name: []byte("echo"), ID: []byte(`3`), Meta: []byte(`{}`), Plugin: []byte("p")}},
		{"empty", CallFrame{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := AppendCallFrame(nil, &tc.f)
			if len(b) != tc.f.Size() {
				t.Errorf("len = %d; Size() = %d", len(b), tc.f.Size())
			}
			var got CallFrame
			if !ParseCallFrame(b, &got) {
				t.Fatalf("ParseCallFrame(%q) failed", b)
			}
			for i, pair := range [][2][]byte{{got.Name, tc.f.Name}, {got.ID, tc.f.ID}, {got.Meta, tc.f.Meta},
				{got.ProtocolVersion, tc.f.ProtocolVersion}, {got.Plugin, tc.f.Plugin}, {got.Arguments, tc.f.Arguments}} {
				if !bytes.Equal(pair[0], pair[1]) {
					t.Errorf("field %d: got %q; want %q", i, pair[0], pair[1])
				}
			}
			for n := range frameFields*4 + len(tc.f.Name) + len(tc.f.ID) + len(tc.f.Meta) + len(tc.f.ProtocolVersion) + len(tc.f.Plugin) {
				if ParseCallFrame(b[:n], &got) {
					t.Errorf("ParseCallFrame of %d of %d bytes succeeded; want refused", n, len(b))
				}
			}
		})
	}
}

// FuzzCallFrame: any bytes either fail to parse or parse into fields
// that frame back into the same bytes.
func FuzzCallFrame(f *testing.F) {
	f.Add(AppendCallFrame(nil, &CallFrame{Name: []byte("echo"), ID: []byte("1"), Meta: []byte("{}"), Arguments: []byte(`{"a":1}`)}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		var fr CallFrame
		if !ParseCallFrame(b, &fr) {
			return
		}
		if again := AppendCallFrame(nil, &fr); !bytes.Equal(again, b) {
			t.Fatalf("reframed %q as %q", b, again)
		}
	})
}
