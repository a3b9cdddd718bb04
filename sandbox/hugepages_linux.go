//go:build linux

package sandbox

import (
	"fmt"
	"io"
	"os"
	"syscall"
	"unsafe"
)

// hugePage is the size of a transparent huge page on x86-64 and arm64
// with 4 KiB base pages (hugepages_linux.go). Where pages differ the
// advice covers no whole huge page and the kernel ignores it.
const hugePage = 2 << 20

// adviseHuge asks the kernel to back b's memory, which must be an
// anonymous mapping not yet touched, with transparent huge pages:
// megabytes of code or module bytes then fault in a few times rather
// than once every 4 KiB, which on a virtual machine costs ≈ 10–25 µs each
// (docs/performance.md). Advice only: where transparent huge pages are
// off, or none is free, the memory is what it would have been.
func adviseHuge(b []byte) {
	if len(b) < hugePage {
		return // no whole huge page fits
	}
	page := uintptr(os.Getpagesize())
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	off := int((page - addr%page) % page) // madvise starts on a page
	_ = syscall.Madvise(b[off:], syscall.MADV_HUGEPAGE)
}

// readLarge returns file's bytes and the func that frees them, to be
// called once nothing uses them. A file of megabytes is read into an
// anonymous mapping aligned to and advised for huge pages (adviseHuge),
// outside the Go heap; a smaller one, or one whose mapping fails, into
// the heap, with a free that does nothing.
func readLarge(file string) ([]byte, func(), error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	n := st.Size()
	if n > 1<<40 {
		return nil, nil, fmt.Errorf("%s: %d bytes", file, n)
	}
	b, free := []byte(nil), func() {}
	if n >= hugePage {
		if m, unmap, err := mapLarge(int(n)); err == nil {
			b, free = m, unmap
		}
	}
	if b == nil {
		b = make([]byte, n)
	}
	if _, err := io.ReadFull(f, b); err != nil {
		free()
		return nil, nil, err
	}
	return b, free, nil
}

// mapLarge returns n bytes of an anonymous mapping that starts on a huge
// page and is advised for them, and the func that unmaps it.
func mapLarge(n int) ([]byte, func(), error) {
	m, err := syscall.Mmap(-1, 0, n+hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, err
	}
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(m)))
	off := int((hugePage - addr%hugePage) % hugePage)
	b := m[off : off+n : off+n]
	adviseHuge(b)
	return b, func() { _ = syscall.Munmap(m) }, nil
}
