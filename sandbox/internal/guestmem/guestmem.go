package guestmem

import (
	"context"

	"github.com/tetratelabs/wazero/experimental"
)

// With returns ctx carrying an allocator for the memories of the modules
// instantiated under it, and the Memories that records them; give both
// to [UnmapWith] once the modules' owner is known. Where mappings are not
// supported it returns ctx unchanged and nil: wazero's Go-heap memory
// applies.
func With(ctx context.Context) (context.Context, *Memories) {
	if !Supported {
		return ctx, nil
	}
	ms := &Memories{}
	return experimental.WithMemoryAllocator(ctx, allocator{ms}), ms
}

// UnmapWith returns the address space of ms to the system once owner is
// unreachable. owner must be what every call into the modules goes
// through (their instance), so that no guest code can still run in a
// memory when it goes: wazero frees a memory when its module closes,
// which may happen while a call still runs (closing a runtime stops its
// calls only at their next check), so a closed module's memory only
// gives its pages back and reads as zeros until then.
func UnmapWith[T any](owner *T, ms *Memories) {
	if ms != nil {
		attachUnmap(owner, ms)
	}
}
