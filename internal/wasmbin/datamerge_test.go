package wasmbin

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/tetratelabs/wazero"
)

// dataModule is a module with one exported memory of pages pages and
// the given data section body (nil for none), and a data count section
// when count.
func dataModule(pages uint32, data []byte, count bool) []byte {
	b := append([]byte(nil), "\x00asm\x01\x00\x00\x00"...)
	b = AppendSection(b, 5, AppendU32([]byte{0x01, 0x00}, pages))                // memory: min pages
	b = AppendSection(b, 7, append(AppendName([]byte{0x01}, "mem"), 0x02, 0x00)) // export "mem"
	if count {
		b = AppendSection(b, SecDataCount, AppendU32(nil, 1))
	}
	if data != nil {
		b = AppendSection(b, SecData, data)
	}
	return AppendSection(b, 0, append(AppendName(nil, "after"), "kept"...)) // a custom section after
}

// activeSegments encodes active segments of memory 0 at offs, segment i
// holding lens[i] bytes of value i+1.
func activeSegments(offs []int32, lens []int) []byte {
	b := AppendU32(nil, uint32(len(offs)))
	for i, off := range offs {
		b = AppendSleb(append(b, 0x00, 0x41), int64(off))
		b = AppendU32(append(b, 0x0b), uint32(lens[i]))
		b = append(b, bytes.Repeat([]byte{byte(i + 1)}, lens[i])...)
	}
	return b
}

// spaced returns n offsets starting at 16, each segment of size bytes
// followed by gap bytes.
func spaced(n, size, gap int) ([]int32, []int) {
	offs, lens := make([]int32, n), make([]int, n)
	for i := range n {
		offs[i], lens[i] = int32(16+i*(size+gap)), size
	}
	return offs, lens
}

func TestMergeData(t *testing.T) {
	many, manyLens := spaced(300, 5, 20)
	wide, wideLens := spaced(300, 5, dataMergeGap+1)
	few, fewLens := spaced(dataMergeMin-1, 5, 20)
	reversed := make([]int32, len(many))
	for i := range many {
		reversed[i] = many[len(many)-1-i]
	}
	overlap := append([]int32(nil), many...)
	overlap[100] = overlap[99] + 2
	passive := append([]byte{0x01, 0x01}, AppendU32(nil, 3)...)
	for _, tc := range []struct {
		name     string
		wasm     []byte
		segments int // after; 0: unchanged
	}{
		{"gaps within the limit", dataModule(1, activeSegments(many, manyLens), false), 1},
		{"gaps past the limit", dataModule(1, activeSegments(wide, wideLens), false), 0},
		{"too few to merge", dataModule(1, activeSegments(few, fewLens), false), 0},
		{"out of order", dataModule(1, activeSegments(reversed, manyLens), false), 1},
		{"overlapping", dataModule(1, activeSegments(overlap, manyLens), false), 0},
		{"data count section", dataModule(1, activeSegments(many, manyLens), true), 0},
		{"a passive segment", dataModule(1, append(passive, "abc"...), false), 0},
		{"no data", dataModule(1, nil, false), 0},
		{"truncated", dataModule(1, activeSegments(many, manyLens), false)[:200], 0},
		{"not wasm", []byte("hello"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := MergeData(tc.wasm)
			if tc.segments == 0 {
				if !bytes.Equal(got, tc.wasm) {
					t.Fatalf("changed the module; want it as it was")
				}
				return
			}
			segs := sectionSegments(t, got)
			if len(segs) != tc.segments {
				t.Errorf("%d segments; want %d", len(segs), tc.segments)
			}
			if !bytes.HasSuffix(got, []byte("afterkept")) {
				t.Error("the sections after the data section are not kept")
			}
			checkSameMemory(t, tc.wasm, got)
		})
	}
}

// sectionSegments reads the data segments of wasm.
func sectionSegments(t testing.TB, wasm []byte) []dataSegment {
	var segs []dataSegment
	ok := true
	err := Sections(wasm, func(s Section) error {
		if s.ID == SecData {
			segs, ok = readDataSegments(s)
		}
		return nil
	})
	if err != nil || !ok {
		t.Fatalf("reading the data segments: %v (understood: %v)", err, ok)
	}
	return segs
}

// image is the bytes the segments write, by address.
func image(segs []dataSegment) map[uint32]byte {
	m := map[uint32]byte{}
	for _, s := range segs {
		for i, c := range s.init {
			m[s.off+uint32(i)] = c
		}
	}
	return m
}

// checkSameImage fails unless after writes what before writes, and zeros
// only elsewhere.
func checkSameImage(t testing.TB, before, after []dataSegment) {
	t.Helper()
	was, is := image(before), image(after)
	for addr, c := range was {
		if is[addr] != c {
			t.Fatalf("byte at %d: %d; want %d", addr, is[addr], c)
		}
	}
	for addr, c := range is {
		if _, ok := was[addr]; !ok && c != 0 {
			t.Fatalf("byte at %d: %d written where the original wrote nothing", addr, c)
		}
	}
}

// checkSameMemory instantiates both modules on wazero and compares the
// memories they start with.
func checkSameMemory(t *testing.T, a, b []byte) {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	var mems [2][]byte
	for i, wasm := range [][]byte{a, b} {
		mod, err := rt.InstantiateWithConfig(ctx, wasm, wazero.NewModuleConfig().WithName(fmt.Sprint(i)))
		if err != nil {
			t.Fatalf("module %d: %v", i, err)
		}
		mems[i], _ = mod.Memory().Read(0, mod.Memory().Size())
	}
	if !bytes.Equal(mems[0], mems[1]) {
		t.Error("the merged module starts with another memory")
	}
}

// FuzzMergeData: whatever the bytes, MergeData does not panic, and a
// module it changes writes the same bytes where the original wrote and
// zeros only elsewhere, with its other sections as they were.
func FuzzMergeData(f *testing.F) {
	many, manyLens := spaced(dataMergeMin+1, 3, 7)
	f.Add(dataModule(1, activeSegments(many, manyLens), false))
	f.Add(dataModule(1, activeSegments(many, manyLens), true))
	f.Add([]byte("\x00asm\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, wasm []byte) {
		got := MergeData(wasm)
		if bytes.Equal(got, wasm) {
			return
		}
		checkSameImage(t, sectionSegments(t, wasm), sectionSegments(t, got))
		var others [2][]Section
		for i, m := range [][]byte{wasm, got} {
			Sections(m, func(s Section) error {
				if s.ID != SecData {
					others[i] = append(others[i], s)
				}
				return nil
			})
		}
		if len(others[0]) != len(others[1]) {
			t.Fatalf("%d other sections; want %d", len(others[1]), len(others[0]))
		}
		for i := range others[0] {
			if others[0][i].ID != others[1][i].ID || !bytes.Equal(others[0][i].Body, others[1][i].Body) {
				t.Fatalf("section %d (id %d) changed", i, others[0][i].ID)
			}
		}
	})
}
