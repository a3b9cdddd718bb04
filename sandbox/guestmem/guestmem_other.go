//go:build !(linux && (amd64 || arm64))

package guestmem

import "github.com/tetratelabs/wazero/experimental"

// Supported reports whether guests' memories live outside the Go heap.
const Supported = false

type allocator struct{}

func (allocator) Allocate(_, _ uint64) experimental.LinearMemory { return &heapMemory{} }
