package extism

import (
	"encoding/binary"
	"slices"
)

// Kernel is the Extism kernel's memory of one native instance: the blocks a
// guest reaches by i64 offsets through extism:host/env ([Funcs]), plus the
// input, output and error registers. It lives in Go memory, not in a second Wasm
// memory as go-sdk's kernel does, so the host moves input and output with
// one copy each and an idle instance holds nothing here.
//
// Offsets start at kernelBase (0 is NULL). Blocks are bump-allocated and
// never reused within a call, like go-sdk's kernel binary v1.7.0: a guest
// that frees its output block and then allocates again (go-pdk's OutputJSON
// does) still sees its output. Reset, before every call, drops them all.
//
// A Kernel serves one call at a time and needs no lock.
type Kernel struct {
	mem    []byte  // the arena; mem[i] is at offset kernelBase+i
	blocks []block // sorted by offset
	limit  int     // bytes the arena may hold

	input, inputLen   uint64
	output, outputLen uint64
	err               uint64
}

// block is one allocation.
type block struct {
	off, len uint64
	free     bool
}

const (
	kernelBase = 64
	// KeepArena is the largest arena kept across calls, in bytes; a
	// bigger one is dropped after the call so that idle instances stay
	// small.
	KeepArena = 16 << 10
)

// NewKernel returns the memory of one instance, whose arena holds at most
// limit bytes.
func NewKernel(limit int) Kernel { return Kernel{limit: limit} }

// Reset forgets every block and register, as go-sdk's kernel reset does
// before each call.
func (k *Kernel) Reset() {
	if k.dropped() {
		k.mem = nil
	}
	k.mem = k.mem[:0]
	k.blocks = k.blocks[:0]
	k.input, k.inputLen, k.output, k.outputLen, k.err = 0, 0, 0, 0, 0
}

// dropped reports whether Reset lets the arena go rather than keep it
// for the next call: then nothing writes its bytes again, and what the
// call left in it (its output) may be kept without a copy.
func (k *Kernel) dropped() bool { return cap(k.mem) > KeepArena }

// alloc returns the offset of a new zeroed block of n bytes, or 0 when n is
// 0 or the arena is full.
func (k *Kernel) alloc(n uint64) uint64 {
	off := k.reserve(n)
	if off != 0 {
		clear(k.mem[off-kernelBase:][:n])
	}
	return off
}

// reserve is alloc without the zeroing, for a block its caller fills:
// the arena's bytes past its length may hold an earlier call's data.
func (k *Kernel) reserve(n uint64) uint64 {
	if n == 0 {
		return 0
	}
	start := (len(k.mem) + 7) &^ 7 // 8-aligned, so u64 access is cheap for the guest
	if n > uint64(k.limit) || start > k.limit-int(n) {
		return 0
	}
	end := start + int(n)
	// Grow without a temporary: slices.Grow copies only what is in use.
	k.mem = slices.Grow(k.mem, end-len(k.mem))[:end]
	off := kernelBase + uint64(start)
	k.blocks = append(k.blocks, block{off: off, len: n})
	return off
}

// Write returns a new block holding b, or 0.
func (k *Kernel) Write(b []byte) uint64 {
	off := k.reserve(uint64(len(b)))
	if off != 0 {
		copy(k.mem[off-kernelBase:], b)
	}
	return off
}

// find returns the index of the live block starting at off, or -1.
func (k *Kernel) find(off uint64) int {
	i, ok := slices.BinarySearchFunc(k.blocks, off, func(b block, off uint64) int {
		switch {
		case b.off < off:
			return -1
		case b.off > off:
			return 1
		}
		return 0
	})
	if !ok || k.blocks[i].free {
		return -1
	}
	return i
}

// length is the size of the live block at off; 0 for anything else,
// including a freed block.
func (k *Kernel) length(off uint64) uint64 {
	if i := k.find(off); i >= 0 {
		return k.blocks[i].len
	}
	return 0
}

// free marks the block at off free. Freeing the input empties it.
func (k *Kernel) free(off uint64) {
	if i := k.find(off); i >= 0 {
		k.blocks[i].free = true
		if off == k.input {
			k.inputLen = 0
		}
	}
}

// bytes returns the n bytes at off without copying, or nil when they are
// not all inside the arena.
func (k *Kernel) bytes(off, n uint64) []byte {
	if off < kernelBase {
		return nil
	}
	i := off - kernelBase
	if i > uint64(len(k.mem)) || n > uint64(len(k.mem))-i {
		return nil
	}
	return k.mem[i : i+n : i+n]
}

// Read returns the live block at off without copying; nil for 0 or a
// non-block.
func (k *Kernel) Read(off uint64) []byte {
	return k.bytes(off, k.length(off))
}

func (k *Kernel) loadU8(off uint64) uint32 {
	if b := k.bytes(off, 1); b != nil {
		return uint32(b[0])
	}
	return 0
}

func (k *Kernel) loadU64(off uint64) uint64 {
	if b := k.bytes(off, 8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (k *Kernel) storeU8(off uint64, v uint32) {
	if b := k.bytes(off, 1); b != nil {
		b[0] = byte(v)
	}
}

func (k *Kernel) storeU64(off, v uint64) {
	if b := k.bytes(off, 8); b != nil {
		binary.LittleEndian.PutUint64(b, v)
	}
}

// SetInput copies in into a new block and makes it the input. It reports
// false when the arena cannot hold it.
func (k *Kernel) SetInput(in []byte) bool {
	if len(in) == 0 {
		return true
	}
	// Room for an output as large as the input too (echo-like tools), so
	// the arena need not grow during the call.
	if want := min(2*len(in)+4096, k.limit); cap(k.mem) < want {
		k.mem = make([]byte, 0, want)
	}
	off := k.Write(in)
	k.input, k.inputLen = off, uint64(len(in))
	return off != 0
}

func (k *Kernel) inputLoadU8(i uint64) uint32 {
	if i >= k.inputLen {
		return 0
	}
	return k.loadU8(k.input + i)
}

func (k *Kernel) inputLoadU64(i uint64) uint64 {
	if i > k.inputLen || k.inputLen-i < 8 {
		return 0
	}
	return k.loadU64(k.input + i)
}

// inputBytes returns the input as input_load_u8 and input_load_u64 read
// it, without copying; nil when it is not inside the arena.
func (k *Kernel) inputBytes() []byte { return k.bytes(k.input, k.inputLen) }

// setOutput makes a new block holding b the output, as the guest's
// output_set of it would: 0, or 1 when the arena cannot hold b (the
// output is then unchanged).
func (k *Kernel) setOutput(b []byte) int32 {
	off := k.Write(b)
	if off == 0 && len(b) > 0 {
		return 1
	}
	k.output, k.outputLen = off, uint64(len(b))
	return 0
}

// outputBytes returns the output without copying; nil if the guest set
// none or set one outside the arena.
func (k *Kernel) outputBytes() []byte { return k.bytes(k.output, k.outputLen) }

// Output returns the output the guest set, for its caller to keep past
// Reset: nil when it set none (or one outside the arena), else a copy,
// except when Reset lets the arena go and the output is most of it (an
// echo's: the input is the rest): then the arena's own bytes, which saves
// a copy of a large output and pins little more than it.
func (k *Kernel) Output() []byte {
	b := k.outputBytes()
	switch {
	case len(b) == 0:
		return nil
	case k.dropped() && len(b) >= cap(k.mem)/4:
		return b
	}
	return append([]byte(nil), b...)
}

// ErrorMessage returns the message of error_set, or "".
func (k *Kernel) ErrorMessage() string {
	if k.err == 0 {
		return ""
	}
	return string(k.Read(k.err))
}

// memoryBytes is what memory_bytes reports: the arena's size.
func (k *Kernel) memoryBytes() uint64 { return uint64(len(k.mem)) }
