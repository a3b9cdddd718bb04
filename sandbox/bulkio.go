package sandbox

import (
	"context"
	"errors"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/abi"
)

// ioModule is mcphost's bulk-copy extension of the kernel (abi.IONamespace).
const ioModule = abi.IONamespace

var errGuestBounds = errors.New("bulk copy outside the guest's memory")

// ioHostModule defines abi.IORead and abi.IOWrite on the native kernel:
// one memory copy each way between a kernel block and the calling guest's
// memory. A range outside the guest's memory panics, failing the call.
func ioHostModule(hb wazero.HostModuleBuilder) wazero.HostModuleBuilder {
	hb.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, mod api.Module, s []uint64) {
		g := guestOf(ctx)
		b := g.k.Read(s[0])
		n := min(uint64(len(b)), uint64(api.DecodeU32(s[2])))
		if n > 0 && !mod.Memory().Write(api.DecodeU32(s[1]), b[:n]) {
			panic(errGuestBounds)
		}
		s[0] = api.EncodeI32(int32(n))
	}), []api.ValueType{i64, i32, i32}, []api.ValueType{i32}).Export(abi.IORead)
	hb.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, mod api.Module, s []uint64) {
		g := guestOf(ctx)
		b, ok := mod.Memory().Read(api.DecodeU32(s[0]), api.DecodeU32(s[1]))
		if !ok {
			panic(errGuestBounds)
		}
		s[0] = g.k.Write(b)
	}), []api.ValueType{i32, i32}, []api.ValueType{i64}).Export(abi.IOWrite)
	return hb
}
