//go:build linux && (amd64 || arm64)

package guestmem

import (
	"context"
	"runtime"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/tetratelabs/wazero"
)

// memModule is a module with one exported memory of 1 to 4 pages.
var memModule = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
	0x05, 0x04, 0x01, 0x01, 0x01, 0x04, // memory: min 1, max 4
	0x07, 0x07, 0x01, 0x03, 'm', 'e', 'm', 0x02, 0x00, // export "mem"
}

// TestModuleMemoryMapped: a module instantiated under With grows its
// memory in place, keeps its bytes, stops at its maximum, and gives its
// pages back to the system when it closes.
func TestModuleMemoryMapped(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	mctx, ms := With(ctx)
	mod, err := rt.InstantiateWithConfig(mctx, memModule, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatal(err)
	}
	owner := &struct{ mod any }{mod}
	UnmapWith(owner, ms)
	mem := mod.Memory()
	first, _ := mem.Read(0, mem.Size())
	if !mem.WriteString(100, "kept") {
		t.Fatal("write failed")
	}
	if _, ok := mem.Grow(2); !ok {
		t.Fatal("grow to 3 pages failed")
	}
	all, _ := mem.Read(0, mem.Size())
	if len(all) != 3<<16 || unsafe.SliceData(all) != unsafe.SliceData(first) {
		t.Errorf("after grow: %d bytes at %p; want %d at %p (in place)", len(all), unsafe.SliceData(all), 3<<16, unsafe.SliceData(first))
	}
	if got, _ := mem.Read(100, 4); string(got) != "kept" {
		t.Errorf("after grow: read %q; want kept", got)
	}
	if _, ok := mem.Grow(2); ok {
		t.Error("grow past the maximum of 4 pages succeeded")
	}
	all[len(all)-1] = 1 // the last page is writable
	if n := resident(t, all); n == 0 {
		t.Fatal("no page of a written memory resident")
	}
	if err := mod.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if n := resident(t, all); n != 0 {
		t.Errorf("after close: %d pages resident; want 0", n)
	}
	if got, _ := mem.Read(100, 4); string(got) != "\x00\x00\x00\x00" {
		t.Errorf("after close: read %q; want zeros (still mapped while its owner lives)", got)
	}
	runtime.KeepAlive(owner)
	// Once the owner is gone, so is the address space: the cleanup runs
	// on its own goroutine after a collection finds the owner unreachable.
	done := make(chan struct{})
	unmapped = func(got *Memories) {
		if got == ms {
			close(done)
		}
	}
	defer func() { unmapped = nil }()
	owner = nil
	deadline := time.After(time.Minute)
	for collected := false; !collected; {
		runtime.GC()
		select {
		case <-done:
			collected = true
		case <-time.After(50 * time.Millisecond): // collect again: the owner may have been live at this one
		case <-deadline:
			t.Fatal("the owner was not collected and cleaned up within a minute")
		}
	}
	if mapped(all) {
		t.Error("the memory is still mapped after its owner was collected")
	}
}

// mapped reports whether b's first page is mapped (mincore fails with
// ENOMEM on an unmapped range).
func mapped(b []byte) bool {
	vec := make([]byte, 1)
	_, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(b))), 1, uintptr(unsafe.Pointer(&vec[0])))
	return e != syscall.ENOMEM
}

// TestReallocate: the allocator's contract as wazero uses it, including a
// memory of at most zero pages.
func TestReallocate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		max, grow uint64
		ok        bool
	}{
		{"within", 4 << 16, 3 << 16, true},
		{"to the maximum", 4 << 16, 4 << 16, true},
		{"past the maximum", 4 << 16, 5 << 16, false},
		{"zero pages", 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms := &Memories{}
			m := allocator{ms}.Allocate(0, tc.max)
			defer ms.regions[0].unmap()
			defer m.Free()
			buf := m.Reallocate(tc.grow)
			if (buf != nil) != tc.ok || uint64(len(buf)) != map[bool]uint64{true: tc.grow}[tc.ok] {
				t.Fatalf("Reallocate(%d): %d bytes (nil %v); want ok %v", tc.grow, len(buf), buf == nil, tc.ok)
			}
			if len(buf) > 0 {
				buf[len(buf)-1] = 7
			}
		})
	}
	if n := fallbacks.Load(); n != 0 {
		t.Errorf("%d memories fell back to the Go heap", n)
	}
}

// resident counts the pages of b in memory (mincore).
func resident(t *testing.T, b []byte) int {
	t.Helper()
	page := syscall.Getpagesize()
	vec := make([]byte, (len(b)+page-1)/page)
	if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
		t.Fatalf("mincore: %v", e)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}
