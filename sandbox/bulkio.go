package sandbox

import (
	"context"
	"errors"

	extism "github.com/extism/go-sdk"
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
		b := g.k.read(s[0])
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
		s[0] = g.k.write(b)
	}), []api.ValueType{i32, i32}, []api.ValueType{i64}).Export(abi.IOWrite)
	return hb
}

// ioFallback defines the same functions for go-sdk, whose host functions
// cannot reach the guest's memory: read answers -1 and write 0, "not
// supported", and the guest falls back to the 8-byte kernel calls.
func ioFallback() []extism.HostFunction {
	read := extism.NewHostFunctionWithStack(abi.IORead, func(_ context.Context, _ *extism.CurrentPlugin, s []uint64) {
		s[0] = api.EncodeI32(-1)
	}, []extism.ValueType{extism.ValueTypeI64, extism.ValueTypeI32, extism.ValueTypeI32}, []extism.ValueType{extism.ValueTypeI32})
	write := extism.NewHostFunctionWithStack(abi.IOWrite, func(_ context.Context, _ *extism.CurrentPlugin, s []uint64) {
		s[0] = 0
	}, []extism.ValueType{extism.ValueTypeI32, extism.ValueTypeI32}, []extism.ValueType{extism.ValueTypeI64})
	read.SetNamespace(ioModule)
	write.SetNamespace(ioModule)
	return []extism.HostFunction{read, write}
}
