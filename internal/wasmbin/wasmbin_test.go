package wasmbin

import (
	"bytes"
	"errors"
	"testing"
)

func TestKindOf(t *testing.T) {
	tests := []struct {
		name string
		wasm string
		want Kind
	}{
		{"empty", "", NotWasm},
		{"magic only", "\x00asm", NotWasm},
		{"text", "hello world", NotWasm},
		{"module", "\x00asm\x01\x00\x00\x00", Module},
		{"component", "\x00asm\x0d\x00\x01\x00", Component},
		{"module version 2", "\x00asm\x02\x00\x00\x00", Unknown},
		{"component version 0xe", "\x00asm\x0e\x00\x01\x00", Unknown},
	}
	for _, tt := range tests {
		if got := KindOf([]byte(tt.wasm)); got != tt.want {
			t.Errorf("%s: KindOf = %d; want %d", tt.name, got, tt.want)
		}
		if got := IsComponent([]byte(tt.wasm)); got != (tt.want == Component) {
			t.Errorf("%s: IsComponent = %v", tt.name, got)
		}
	}
}

func TestLEB(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
		bits uint
		u    uint64 // want from Uleb
		s    int64  // want from Sleb
		n    int
		uerr error
		serr error
	}{
		{"zero", []byte{0}, 32, 0, 0, 1, nil, nil},
		{"127", []byte{0x7f}, 32, 127, -1, 1, nil, nil},
		{"128", []byte{0x80, 0x01}, 32, 128, 128, 2, nil, nil},
		{"-128", []byte{0x80, 0x7f}, 32, 16256, -128, 2, nil, nil},
		{"max u32", []byte{0xff, 0xff, 0xff, 0xff, 0x0f}, 32, 1<<32 - 1, 0xffffffff, 5, nil, nil},
		{"u32 with bit 32 set", []byte{0xff, 0xff, 0xff, 0xff, 0x1f}, 32, 0, 0x1ffffffff, 5, ErrTooLong, nil},
		{"six bytes", []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 32, 0, 0, 0, ErrTooLong, ErrTooLong},
		{"cut short", []byte{0x80}, 32, 0, 0, 0, ErrEOF, ErrEOF},
		{"empty", nil, 32, 0, 0, 0, ErrEOF, ErrEOF},
	}
	for _, tt := range tests {
		u, n, err := Uleb(tt.b, tt.bits)
		if !errors.Is(err, tt.uerr) || (err == nil && (u != tt.u || n != tt.n)) {
			t.Errorf("%s: Uleb = %d, %d, %v; want %d, %d, %v", tt.name, u, n, err, tt.u, tt.n, tt.uerr)
		}
		s, n, err := Sleb(tt.b, tt.bits)
		if !errors.Is(err, tt.serr) || (err == nil && (s != tt.s || n != tt.n)) {
			t.Errorf("%s: Sleb = %d, %d, %v; want %d, %d, %v", tt.name, s, n, err, tt.s, tt.n, tt.serr)
		}
	}
	for _, v := range []int64{0, 1, -1, 63, 64, -64, -65, 1 << 40, -1 << 40} {
		b := AppendSleb(nil, v)
		if got, n, err := Sleb(b, 64); err != nil || got != v || n != len(b) {
			t.Errorf("Sleb(AppendSleb(%d)) = %d, %d, %v", v, got, n, err)
		}
	}
}

// module assembles a core module from sections.
func module(secs ...[]byte) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	for _, s := range secs {
		b = append(b, s...)
	}
	return b
}

func TestExports(t *testing.T) {
	body := AppendU32(nil, 2)
	body = append(AppendName(body, "run"), 0, 3)
	body = append(AppendName(body, "memory"), 2, 0)
	exports := AppendSection(nil, SecExport, body)
	custom := AppendSection(nil, 0, AppendName(nil, "name"))
	tests := []struct {
		name    string
		wasm    []byte
		want    []Export
		wantErr bool
	}{
		{"two exports after a custom section", module(custom, exports), []Export{{"run", 0, 3}, {"memory", 2, 0}}, false},
		{"no sections", module(), nil, false},
		{"not wasm", []byte("hello"), nil, true},
		{"section past the end", module([]byte{SecExport, 0x7f, 0}), nil, true},
		{"export cut short", module(AppendSection(nil, SecExport, body[:len(body)-1])), nil, true},
		{"hostile count", module(AppendSection(nil, SecExport, AppendU32(nil, 1<<30))), nil, true},
		{"name not UTF-8", module(AppendSection(nil, SecExport, append(AppendName(AppendU32(nil, 1), "\xff"), 0, 0))), nil, true},
	}
	for _, tt := range tests {
		got, err := Exports(tt.wasm)
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: error %v; want an error: %v", tt.name, err, tt.wantErr)
			continue
		}
		if len(got) != len(tt.want) {
			t.Errorf("%s: got %v; want %v", tt.name, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%s: export %d is %v; want %v", tt.name, i, got[i], tt.want[i])
			}
		}
	}
}

func TestSections(t *testing.T) {
	a, b := AppendSection(nil, 1, []byte{1, 2, 3}), AppendSection(nil, 10, nil)
	wasm := module(a, b)
	var got []Section
	if err := Sections(wasm, func(s Section) error { got = append(got, s); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != 1 || got[0].At != 8 || got[0].Off != 10 || !bytes.Equal(got[0].Body, []byte{1, 2, 3}) ||
		got[1].ID != 10 || got[1].At != 13 || got[1].Size != 0 {
		t.Errorf("got %+v", got)
	}
	stop := errors.New("stop")
	if err := Sections(wasm, func(Section) error { return stop }); err != stop {
		t.Errorf("f's error came back as %v", err)
	}
	err := Sections(module([]byte{1, 5, 0}), func(Section) error { return nil })
	var we *Error
	if !errors.As(err, &we) || !errors.Is(err, ErrEOF) || we.Offset != 8 {
		t.Errorf("a section past the end: %v", err)
	}
}

// FuzzRead: no reader of this package panics or reads past the end on
// any bytes; what it returns lies inside the input.
func FuzzRead(f *testing.F) {
	body := append(AppendName(AppendU32(nil, 1), "run"), 0, 0)
	f.Add(module(AppendSection(nil, 0, AppendName(nil, "x")), AppendSection(nil, SecExport, body)))
	f.Add([]byte("\x00asm\x0d\x00\x01\x00\x01\x02\x00\x00"))
	f.Add([]byte("\x00asm\x01\x00\x00\x00\x07\x7f\x00"))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, b []byte) {
		KindOf(b)
		for _, bits := range []uint{1, 7, 32, 33, 64} {
			if _, n, err := Uleb(b, bits); err == nil && (n < 1 || n > len(b)) {
				t.Fatalf("Uleb(%d bits) says %d bytes of %d", bits, n, len(b))
			}
			if _, n, err := Sleb(b, bits); err == nil && (n < 1 || n > len(b)) {
				t.Fatalf("Sleb(%d bits) says %d bytes of %d", bits, n, len(b))
			}
		}
		_ = Sections(b, func(s Section) error {
			if s.Off < HeaderSize || s.Off+len(s.Body) > len(b) || !bytes.Equal(b[s.Off:s.Off+len(s.Body)], s.Body) {
				t.Fatalf("section %d at %d is not where it says", s.ID, s.Off)
			}
			r := &Reader{B: s.Body, Off: s.Off}
			for !r.Done() {
				if _, err := r.Name(); err != nil {
					break
				}
			}
			return nil
		})
		exports, err := Exports(b)
		if err != nil && exports != nil {
			t.Errorf("exports %v with error %v", exports, err)
		}
		for _, e := range exports {
			if len(e.Name) > len(b) {
				t.Errorf("export %q longer than the input", e.Name)
			}
		}
	})
}
