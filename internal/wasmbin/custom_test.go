package wasmbin

import (
	"bytes"
	"testing"
)

// minimal is a module with a type section and a custom section "other".
var minimal = func() []byte {
	b := []byte(Magic + "\x01\x00\x00\x00")
	b = AppendSection(b, 1, []byte{1, 0x60, 0, 0}) // one type: () -> ()
	b = AppendSection(b, SecCustom, append(AppendName(nil, "other"), "keep"...))
	return b
}()

func TestCustomSectionRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		body []byte
	}{
		{"empty", nil},
		{"json", []byte(`{"format":1}`)},
		{"large", bytes.Repeat([]byte("x"), 300)}, // a two-byte size
	}
	for _, tt := range tests {
		once, err := SetCustomSection(minimal, "mcphost:lists", tt.body)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		// Writing again replaces the section rather than adding one.
		twice, err := SetCustomSection(once, "mcphost:lists", tt.body)
		if err != nil || !bytes.Equal(once, twice) {
			t.Fatalf("%s: second write: %v; same bytes %v", tt.name, err, bytes.Equal(once, twice))
		}
		got, found, err := CustomSection(twice, "mcphost:lists")
		if err != nil || !found || !bytes.Equal(got, tt.body) {
			t.Fatalf("%s: CustomSection = %q, %v, %v; want %q", tt.name, got, found, err, tt.body)
		}
		other, found, err := CustomSection(twice, "other")
		if err != nil || !found || string(other) != "keep" {
			t.Fatalf("%s: the other section = %q, %v, %v", tt.name, other, found, err)
		}
	}
	if _, found, err := CustomSection(minimal, "mcphost:lists"); found || err != nil {
		t.Fatalf("absent section: found %v, err %v", found, err)
	}
}

func TestCustomSectionMalformed(t *testing.T) {
	two := AppendSection(bytes.Clone(minimal), SecCustom, AppendName(nil, "other"))
	tests := []struct {
		name string
		wasm []byte
	}{
		{"not wasm", []byte("hello")},
		{"cut short", minimal[:len(minimal)-2]},
		{"two sections of the name", two},
		{"bad name length", append(bytes.Clone(minimal), SecCustom, 2, 0x7f, 'a')},
	}
	for _, tt := range tests {
		if _, _, err := CustomSection(tt.wasm, "other"); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}
	if _, err := SetCustomSection([]byte("hello"), "x", nil); err == nil {
		t.Error("SetCustomSection of non-wasm: no error")
	}
}

// FuzzCustomSection holds CustomSection to failing rather than panicking
// on any bytes, and SetCustomSection to writing what CustomSection reads.
func FuzzCustomSection(f *testing.F) {
	f.Add(minimal, []byte(`{"format":1}`))
	f.Add(minimal[:9], []byte{})
	f.Add(AppendSection(bytes.Clone(minimal), SecCustom, append(AppendName(nil, "mcphost:lists"), "x"...)), []byte("y"))
	f.Fuzz(func(t *testing.T, wasm, body []byte) {
		old, _, rerr := CustomSection(wasm, "mcphost:lists")
		if rerr == nil && old != nil && (len(old) > len(wasm)) {
			t.Fatalf("body longer than the binary")
		}
		out, err := SetCustomSection(wasm, "mcphost:lists", body)
		if err != nil {
			return
		}
		got, found, err := CustomSection(out, "mcphost:lists")
		if err != nil || !found || !bytes.Equal(got, body) {
			t.Fatalf("after SetCustomSection: %q, %v, %v; want %q", got, found, err, body)
		}
	})
}
