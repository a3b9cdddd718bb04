package sandbox

import (
	"testing"

	"github.com/mcphost/mcphost/internal/wasmbin"
)

// TestMergeDataGoGuest: a guest built by the Go toolchain, with its
// thousands of data segments, is compiled with a handful (what they
// write is wasmbin's tests' and the Go-guest tests' to check).
func TestMergeDataGoGuest(t *testing.T) {
	needGuest(t)
	before, after := dataSegmentCount(t, guestWasm), dataSegmentCount(t, wasmbin.MergeData(guestWasm))
	if before < 1000 || after > 100 {
		t.Fatalf("%d segments merged into %d; want over 1000 into at most 100", before, after)
	}
}

// dataSegmentCount is how many data segments wasm declares.
func dataSegmentCount(t *testing.T, wasm []byte) int {
	n := -1
	err := wasmbin.Sections(wasm, func(s wasmbin.Section) error {
		if s.ID == wasmbin.SecData {
			var err error
			n, err = (&wasmbin.Reader{B: s.Body, Off: s.Off}).Count()
			return err
		}
		return nil
	})
	if err != nil || n < 0 {
		t.Fatalf("no data section read: %v", err)
	}
	return n
}
