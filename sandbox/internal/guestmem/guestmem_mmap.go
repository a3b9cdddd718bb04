//go:build linux && (amd64 || arm64)

package guestmem

import (
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/tetratelabs/wazero/experimental"
)

// Supported reports whether guests' memories live outside the Go heap.
const Supported = true

// osPage is the granularity of commits.
var osPage = uint64(syscall.Getpagesize())

// Memories are the mappings of the modules instantiated under one
// [With] context.
type Memories struct {
	mu      sync.Mutex
	regions []*region
}

type allocator struct{ ms *Memories }

// fallbacks counts memories that fell back to the Go heap, for tests.
var fallbacks atomic.Int64

// Allocate reserves max bytes of address space, none of it committed.
// When the reservation fails (an address-space ulimit, say), the memory
// falls back to wazero's kind, in the Go heap, and says so.
func (a allocator) Allocate(_, max uint64) experimental.LinearMemory {
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
	r := &region{buf: buf}
	a.ms.mu.Lock()
	a.ms.regions = append(a.ms.regions, r)
	a.ms.mu.Unlock()
	return r
}

// region is one reservation: buf[:committed] readable and writable, the
// rest inaccessible.
type region struct {
	mu        sync.Mutex
	buf       []byte
	committed uint64
	freed     bool // the module closed: pages given back
	unmapped  bool // the owner is gone: address space given back
}

// Reallocate commits the pages up to size; the memory never moves.
func (r *region) Reallocate(size uint64) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.freed || r.unmapped || size > uint64(len(r.buf)) {
		return nil
	}
	if size > r.committed {
		end := min((size+osPage-1)/osPage*osPage, uint64(len(r.buf)))
		if err := syscall.Mprotect(r.buf[r.committed:end], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			slog.Warn("guest memory: committing pages failed; the guest's memory.grow fails", "bytes", end, "err", err)
			return nil
		}
		r.committed = end
	}
	return r.buf[:size:size]
}

// Free gives the committed pages back at once; the range stays mapped,
// reading as zeros, until the owner goes (see UnmapWith).
func (r *region) Free() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.freed || r.unmapped {
		return
	}
	r.freed = true
	if r.committed > 0 {
		syscall.Madvise(r.buf[:r.committed], syscall.MADV_DONTNEED)
	}
}

func (r *region) unmap() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.unmapped {
		r.unmapped = true
		syscall.Munmap(r.buf)
	}
}

func attachUnmap[T any](owner *T, ms *Memories) {
	runtime.AddCleanup(owner, func(ms *Memories) {
		ms.mu.Lock()
		defer ms.mu.Unlock()
		for _, r := range ms.regions {
			r.unmap()
		}
		if unmapped != nil {
			unmapped(ms)
		}
	}, ms)
}

// unmapped, when set (by tests), is called after a cleanup has unmapped
// ms's regions.
var unmapped func(ms *Memories)
