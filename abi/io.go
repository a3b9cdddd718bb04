package abi

// IONamespace is mcphost's one extension of the Extism kernel: bulk copies
// between the kernel and the guest's own memory, so that input and output
// cross the boundary in one host call each instead of one per 8 bytes (or
// three: input_length, input_offset and a read). Extism guests never need
// it. A guest built with sdk-guest or the C kit imports it and asks once
// whether the host implements it (IORead of block 0 returns 0 when it
// does, -1 when it does not) before falling back to input_load_u64 and
// store_u64.
const IONamespace = "mcphost:host/io"

// Functions of [IONamespace]. Pointers (dst, src) are i32 offsets into the
// guest's memory; blocks are i64 kernel offsets.
const (
	// IORead (block i64, dst i32, n i32) -> i32 copies up to n bytes of
	// the block into the guest's memory at dst and returns how many it
	// copied (0 for a non-block), or -1 when the host does not support it.
	IORead = "read"
	// IOWrite (src i32, n i32) -> i64 returns a new kernel block holding
	// the n bytes at src, or 0 when the kernel is out of memory or the host
	// does not support it.
	IOWrite = "write"
	// IOInput (dst i32, n i32) -> i64 copies up to n bytes of the call's
	// input into the guest's memory at dst and returns the input's whole
	// length: a guest whose input did not fit asks again with room for
	// it. -1 when the host does not support it.
	IOInput = "input"
	// IOOutput (src i32, n i32) -> i32 makes the n bytes at src the
	// call's output (output_set of a block holding them) and returns 0; 1
	// when the kernel cannot hold them, -1 when the host does not support
	// it.
	IOOutput = "output"
)
