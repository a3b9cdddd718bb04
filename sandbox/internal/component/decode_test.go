package component

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/wasmbin"
)

// asm assembles a component binary by hand: the header, then each
// section as (id, body); tests build odd and hostile components with it
// where the text format cannot say what they need.
func asm(sections ...[]byte) []byte {
	out := []byte("\x00asm\x0d\x00\x01\x00")
	for _, s := range sections {
		out = append(out, s...)
	}
	return out
}

// sec is one section: its id, its size and body.
func sec(id byte, body ...[]byte) []byte {
	b := slices.Concat(body...)
	return slices.Concat([]byte{id}, leb(uint32(len(b))), b)
}

// vec is a vector: its count, then its items.
func vec(items ...[]byte) []byte {
	return slices.Concat(append([][]byte{leb(uint32(len(items)))}, items...)...)
}

func leb(v uint32) []byte { return wasmbin.AppendU32(nil, v) }

// str is a name: its length, then its bytes.
func str(s string) []byte { return wasmbin.AppendName(nil, s) }

// funcTypeU32 is the type section item `(func (param "a" u32) (result u32))`.
var funcTypeU32 = []byte{0x40, 0x01, 0x01, 'a', 0x79, 0x00, 0x79}

// TestExternNames reads import and export names in each form wasmparser
// reads (ComponentExternName): 0x00 and 0x01 are a tag and the name
// alone — cargo-component 0.16 (wit-component 0.215) wrote 0x01, as in
// wassette's examples/filesystem — and 0x02 adds options, of which a
// version suffix becomes part of the name.
func TestExternNames(t *testing.T) {
	types := sec(7, vec(funcTypeU32))
	for _, tt := range []struct {
		name string
		ext  []byte // the name as written
		want string
	}{
		{"0x00", slices.Concat([]byte{0x00}, str("wasi:logging/logging")), "wasi:logging/logging"},
		{"0x01 (wit-component 0.215)", slices.Concat([]byte{0x01}, str("wasi:logging/logging")), "wasi:logging/logging"},
		{"0x01 one letter", slices.Concat([]byte{0x01}, str("f")), "f"},
		{"0x02 with a version suffix", slices.Concat([]byte{0x02}, str("wasi:http/types@0.2"), vec(slices.Concat([]byte{0x01}, str(".3")))),
			"wasi:http/types@0.2.3"},
		{"0x02 with implements and an id", slices.Concat([]byte{0x02}, str("f"), vec(slices.Concat([]byte{0x00}, str("a:b/c")),
			slices.Concat([]byte{0x02}, str("id")))), "f"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			imp := sec(10, vec(slices.Concat(tt.ext, []byte{0x01, 0x00})))       // (func (type 0))
			exp := sec(11, vec(slices.Concat(tt.ext, []byte{0x01, 0x00, 0x00}))) // (func 0), no ascribed type
			c, err := Decode(asm(types, imp, exp))
			if err != nil {
				t.Fatal(err)
			}
			if len(c.imports) != 1 || c.imports[0] != tt.want {
				t.Errorf("imports %q, want [%q]", c.imports, tt.want)
			}
			if _, ok := c.exports[tt.want]; !ok || len(c.exports) != 1 {
				t.Errorf("exports %v, want one named %q", c.exports, tt.want)
			}
		})
	}
}

// TestDecodeErrorsPlain: a malformed component's error says which
// section, where, which item and what went wrong in words.
func TestDecodeErrorsPlain(t *testing.T) {
	types := sec(7, vec(funcTypeU32))
	for _, tt := range []struct {
		name string
		wasm []byte
		want []string
	}{
		{"a name cut short", asm(types, sec(10, vec(slices.Concat([]byte{0x00, 0x09}, []byte("abc"))))),
			[]string{"the import section (id 10) at byte 20", "import 0 of 1", "ends in the middle of an item", "cut short"}},
		{"an unknown name form", asm(types, sec(10, vec(slices.Concat([]byte{0x07}, str("f"), []byte{0x01, 0x00})))),
			[]string{"the import section (id 10)", "unknown name form 0x07"}},
		{"a name option twice", asm(types, sec(10, vec(slices.Concat([]byte{0x02}, str("f"),
			vec(slices.Concat([]byte{0x01}, str(".1")), slices.Concat([]byte{0x01}, str(".2"))), []byte{0x01, 0x00})))),
			[]string{"import 0 of 1", `name "f": option 0x01 given twice`}},
		{"a section past the end", asm([]byte{0x07, 0x20, 0x01}),
			[]string{"the type section (id 7) at byte 10", "32 bytes, runs past the end of the component", "cut short"}},
		{"bytes left over", asm(sec(7, vec(funcTypeU32), []byte{0x00})),
			[]string{"the type section (id 7) at byte 10: 1 bytes left over after its last item"}},
		{"an unknown section", asm(sec(13)), []string{"section id 13", "unknown section id 13"}},
		// (import "i" (instance (export "r" (type (sub resource)))))
		// (alias export 0 "r" (type)) (core func (canon resource.rep (type 1)))
		{"resource.rep of an imported resource", asm(
			sec(7, vec([]byte{0x42, 0x01, 0x04, 0x00, 0x01, 'r', 0x03, 0x01})),
			sec(10, vec(slices.Concat([]byte{0x00}, str("i"), []byte{0x05, 0x00}))),
			sec(6, vec(slices.Concat([]byte{0x03, 0x00, 0x00}, str("r")))),
			sec(8, vec([]byte{0x04, 0x01}))),
			[]string{"the canonical function section (id 8)", "canonical function 0 of 1",
				"resource.new or resource.rep of type 1, a resource the component imports"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.wasm)
			if err == nil {
				t.Fatal("decoded; want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			var u *UnsupportedError
			if errors.As(err, &u) {
				t.Errorf("error %q is an UnsupportedError; malformed bytes are not a missing feature", err)
			}
		})
	}
}

// instantiate0 is an instance section item: instantiate component 0
// with no arguments.
var instantiate0 = []byte{0x00, 0x00, 0x00}

// TestNestedDecodedOnce: a nested component's core module is read once
// however often the component is instantiated, and each instantiation
// gets its own core instance of it.
func TestNestedDecodedOnce(t *testing.T) {
	child := asm(sec(1, []byte("\x00asm\x01\x00\x00\x00")), sec(2, vec([]byte{0x00, 0x00, 0x00})))
	c, err := Decode(asm(sec(4, child), sec(5, vec(instantiate0, instantiate0, instantiate0))))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.modules) != 1 {
		t.Errorf("%d core modules, want 1: the nested component's module read once", len(c.modules))
	}
	if len(c.instances) != 3 || c.instances[0].module != 0 || c.instances[2].module != 0 {
		t.Errorf("core instances %d, want 3 of module 0: one per instantiation", len(c.instances))
	}
}

// TestNestedBounds: components nested without end, or instantiating
// their child twice at every level (2⁴⁰ instantiations asked for), are
// refused with an UnsupportedError saying which bound they passed.
func TestNestedBounds(t *testing.T) {
	doubling := asm()
	for range 40 {
		doubling = asm(sec(4, doubling), sec(5, vec(instantiate0, instantiate0)))
	}
	deep := asm()
	for range maxDepth + 2 {
		deep = asm(sec(4, deep), sec(5, vec(instantiate0)))
	}
	// A 256 KiB core module (a custom section of padding), instantiated
	// 900 times by a nested component: 225 MiB to compile.
	big := slices.Concat([]byte("\x00asm\x01\x00\x00\x00"), []byte{0x00}, leb(256<<10), str("pad"), make([]byte, 256<<10-4))
	insts := make([][]byte, 900)
	for i := range insts {
		insts[i] = []byte{0x00, 0x00, 0x00}
	}
	repeated := asm(sec(4, asm(sec(1, big), sec(2, vec(insts...)))), sec(5, vec(instantiate0)))
	for _, tt := range []struct {
		name string
		wasm []byte
		want string
	}{
		{"doubling at each of 40 levels", doubling, "more than 1000 instantiations of nested components"},
		{"a 256 KiB module instantiated 900 times", repeated, "core modules instantiated over and over"},
		{"66 levels deep", deep, "components nested more than 64 deep"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Decode(tt.wasm)
			var u *UnsupportedError
			if !errors.As(err, &u) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Decode: %v; want an UnsupportedError saying %q", err, tt.want)
			}
			if c != nil {
				t.Error("a refused component came back")
			}
		})
	}
}
