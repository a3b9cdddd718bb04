package extism

import (
	"errors"

	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/abi"
)

// IOModule is mcphost's bulk-copy extension of the kernel (abi.IONamespace).
const IOModule = abi.IONamespace

// MemFunc is a kernel function that also reaches the calling guest's
// linear memory.
type MemFunc struct {
	Name            string
	Params, Results []api.ValueType
	Fn              func(k *Kernel, mem api.Memory, stack []uint64)
}

var errGuestBounds = errors.New("bulk copy outside the guest's memory")

// IOFuncs are abi.IONamespace's functions: one memory copy each way
// between the kernel (a block, the input, the output) and the calling
// guest's memory. A range outside the guest's memory panics, failing the
// call.
var IOFuncs = []MemFunc{
	{abi.IORead, []api.ValueType{i64, i32, i32}, []api.ValueType{i32}, func(k *Kernel, mem api.Memory, s []uint64) {
		b := k.Read(s[0])
		n := min(uint64(len(b)), uint64(api.DecodeU32(s[2])))
		if n > 0 && !mem.Write(api.DecodeU32(s[1]), b[:n]) {
			panic(errGuestBounds)
		}
		s[0] = api.EncodeI32(int32(n))
	}},
	{abi.IOWrite, []api.ValueType{i32, i32}, []api.ValueType{i64}, func(k *Kernel, mem api.Memory, s []uint64) {
		b, ok := mem.Read(api.DecodeU32(s[0]), api.DecodeU32(s[1]))
		if !ok {
			panic(errGuestBounds)
		}
		s[0] = k.Write(b)
	}},
	{abi.IOInput, []api.ValueType{i32, i32}, []api.ValueType{i64}, func(k *Kernel, mem api.Memory, s []uint64) {
		in := k.inputBytes()
		n := min(uint64(len(in)), uint64(api.DecodeU32(s[1])))
		if n > 0 && !mem.Write(api.DecodeU32(s[0]), in[:n]) {
			panic(errGuestBounds)
		}
		s[0] = uint64(len(in))
	}},
	{abi.IOOutput, []api.ValueType{i32, i32}, []api.ValueType{i32}, func(k *Kernel, mem api.Memory, s []uint64) {
		b, ok := mem.Read(api.DecodeU32(s[0]), api.DecodeU32(s[1]))
		if !ok {
			panic(errGuestBounds)
		}
		s[0] = api.EncodeI32(k.setOutput(b))
	}},
}
