package wasmbin

import (
	"errors"
	"slices"
)

// Data segments: a module built by the standard Go toolchain has tens of
// thousands (its linker starts a new one after every run of zeros of a
// few bytes: 45,955 for examples/echo). wazero keeps each segment of the
// decoded module as a struct of its own (about 56 bytes, for the life of
// the module) and every instance a slice header for each (24 bytes), so
// such a guest costs a few MiB of Go heap in bookkeeping, which GOGC then
// doubles. MergeData coalesces them before compiling: segments closer
// than dataMergeGap become one, the gap filled with the zeros the fresh
// memory holds anyway.
const (
	// dataMergeGap is the largest run of zeros a merge writes.
	dataMergeGap = 64
	// dataMergeMin is the fewest segments worth a merge.
	dataMergeMin = 64
)

// Section ids of a core module's data.
const (
	SecData      = 11
	SecDataCount = 12
)

// dataSegment is an active segment of memory 0 at a constant offset.
type dataSegment struct {
	off  uint32
	init []byte
}

// MergeData returns wasm with its data segments coalesced, or wasm itself
// when there is nothing to merge or anything it does not plainly
// understand: a data count section (memory.init and data.drop name
// segments by index), a passive segment or one of another memory, an
// offset that is not an i32.const, overlapping segments, or bytes that do
// not parse. The memory a merged module starts with is the same.
func MergeData(wasm []byte) []byte {
	var data Section
	found := false
	err := Sections(wasm, func(s Section) error {
		switch s.ID {
		case SecDataCount:
			return errSkipMerge
		case SecData:
			data, found = s, true
		}
		return nil
	})
	if err != nil || !found {
		return wasm
	}
	segs, ok := readDataSegments(data)
	if !ok || len(segs) < dataMergeMin {
		return wasm
	}
	slices.SortStableFunc(segs, func(a, b dataSegment) int { return int(int64(a.off) - int64(b.off)) })
	merged := segs[:0:0]
	for _, s := range segs {
		if n := len(merged); n > 0 {
			last := &merged[n-1]
			end := uint64(last.off) + uint64(len(last.init))
			switch {
			case uint64(s.off) < end:
				return wasm // overlapping: their order would matter
			case uint64(s.off)-end <= dataMergeGap:
				last.init = append(append(last.init, make([]byte, uint64(s.off)-end)...), s.init...)
				continue
			}
		}
		merged = append(merged, dataSegment{s.off, slices.Clip(s.init)})
	}
	if len(merged) == len(segs) {
		return wasm
	}
	body := AppendU32(nil, uint32(len(merged)))
	for _, s := range merged {
		body = append(body, 0x00, 0x41) // active, memory 0; i32.const
		body = AppendSleb(body, int64(int32(s.off)))
		body = AppendU32(append(body, 0x0b), uint32(len(s.init))) // end
		body = append(body, s.init...)
	}
	out := make([]byte, 0, len(wasm)-int(data.Size)+len(body)+5)
	out = append(out, wasm[:data.At]...)
	out = AppendSection(out, SecData, body)
	return append(out, wasm[data.Off+int(data.Size):]...)
}

// errSkipMerge stops the walk over the sections: the module keeps its
// segments.
var errSkipMerge = errors.New("data count section")

// readDataSegments reads a data section whose every segment is active, of
// memory 0, at an i32.const offset; ok is false otherwise.
func readDataSegments(s Section) (segs []dataSegment, ok bool) {
	r := &Reader{B: s.Body, Off: s.Off}
	n, err := r.Count()
	if err != nil {
		return nil, false
	}
	segs = make([]dataSegment, 0, n)
	for range n {
		flags, err := r.U32()
		if err != nil || flags != 0 {
			return nil, false
		}
		if op, err := r.Byte(); err != nil || op != 0x41 {
			return nil, false
		}
		off, k, err := Sleb(r.B[r.Pos:], 32)
		if err != nil {
			return nil, false
		}
		r.Pos += k
		if end, err := r.Byte(); err != nil || end != 0x0b {
			return nil, false
		}
		size, err := r.U32()
		if err != nil {
			return nil, false
		}
		init, err := r.Bytes(size)
		if err != nil {
			return nil, false
		}
		segs = append(segs, dataSegment{uint32(int32(off)), init})
	}
	return segs, r.Done()
}
