//go:build !(linux && (amd64 || arm64))

package guestmem

import "github.com/tetratelabs/wazero/experimental"

// Supported reports whether guests' memories live outside the Go heap.
const Supported = false

// Memories are the mappings of the modules instantiated under one
// [With] context: none here.
type Memories struct{}

type allocator struct{ ms *Memories }

func (allocator) Allocate(_, _ uint64) experimental.LinearMemory { return &heapMemory{} }

func attachUnmap[T any](*T, *Memories) {}
