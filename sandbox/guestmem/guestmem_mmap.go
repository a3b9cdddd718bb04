//go:build linux && (amd64 || arm64)

package guestmem

import (
	"log/slog"
	"runtime"
	"sync/atomic"
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// Supported reports whether guests' memories live outside the Go heap.
const Supported = true

// osPage is the granularity of commits.
var osPage = uint64(syscall.Getpagesize())

type allocator struct{}

// fallbacks counts memories that fell back to the Go heap, for tests.
var fallbacks atomic.Int64

// Allocate reserves max bytes of address space, none of it committed.
// When the reservation fails (an address-space ulimit, say), the memory
// falls back to wazero's kind, in the Go heap, and says so.
func (allocator) Allocate(_, max uint64) experimental.LinearMemory {
	size := max
	if size == 0 { // a memory of at most zero pages still needs an address
		size = osPage
	}
	buf, err := syscall.Mmap(-1, 0, int(size), syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		fallbacks.Add(1)
		slog.Warn("guest memory: reserving address space failed; this memory lives in the Go heap (raise ulimit -v to fix)", "bytes", size, "err", err)
		return &heapMemory{}
	}
	m := &mapped{buf: buf}
	// A module dropped without Close still gives its mapping back.
	runtime.AddCleanup(m, func(buf []byte) { syscall.Munmap(buf) }, buf)
	return m
}

// mapped is one reservation: buf[:committed] readable and writable, the
// rest inaccessible.
type mapped struct {
	buf       []byte
	committed uint64
	freed     bool
}

// Reallocate commits the pages up to size; the memory never moves.
func (m *mapped) Reallocate(size uint64) []byte {
	if m.freed || size > uint64(len(m.buf)) {
		return nil
	}
	if size > m.committed {
		end := min((size+osPage-1)/osPage*osPage, uint64(len(m.buf)))
		if err := syscall.Mprotect(m.buf[m.committed:end], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			slog.Warn("guest memory: committing pages failed; the guest's memory.grow fails", "bytes", end, "err", err)
			return nil
		}
		m.committed = end
	}
	return m.buf[:size:size]
}

// Free gives the committed pages back at once. The address range stays
// reserved, reading as zeros, until the memory is collected: a view of
// it that outlives its module reads zeros rather than faulting.
func (m *mapped) Free() {
	if m.freed {
		return
	}
	m.freed = true
	if m.committed > 0 {
		syscall.Madvise(m.buf[:m.committed], syscall.MADV_DONTNEED)
	}
}
