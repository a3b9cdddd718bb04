package guestmem

import (
	"context"

	"github.com/tetratelabs/wazero/experimental"
)

// With returns ctx carrying the allocator, for the instantiation of a
// module whose memories should live outside the Go heap. Where that is
// not supported, it returns ctx unchanged and wazero's default applies.
func With(ctx context.Context) context.Context {
	if !Supported {
		return ctx
	}
	return experimental.WithMemoryAllocator(ctx, allocator{})
}
