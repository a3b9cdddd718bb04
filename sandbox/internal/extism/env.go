package extism

import "github.com/tetratelabs/wazero/api"

// EnvModule is the import module of the kernel's functions and services.
const EnvModule = "extism:host/env"

const (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

// Func is one kernel function of EnvModule: its name and type, exactly
// go-sdk v1.7.1's (a guest importing a function with another type fails
// to instantiate, as on go-sdk), and what it does to the calling
// instance's Kernel, given the stack of a wazero Go function.
type Func struct {
	Name            string
	Params, Results []api.ValueType
	Fn              func(k *Kernel, stack []uint64)
}

// Funcs are the kernel's functions: blocks, loads and stores, and the
// input, output and error registers. The services of EnvModule (config,
// vars, HTTP, logs) need more than the kernel and are the caller's.
var Funcs = []Func{
	{"alloc", []api.ValueType{i64}, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = k.alloc(s[0]) }},
	{"free", []api.ValueType{i64}, nil, func(k *Kernel, s []uint64) { k.free(s[0]) }},
	{"length", []api.ValueType{i64}, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = k.length(s[0]) }},
	{"length_unsafe", []api.ValueType{i64}, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = k.length(s[0]) }},
	{"load_u8", []api.ValueType{i64}, []api.ValueType{i32}, func(k *Kernel, s []uint64) { s[0] = uint64(k.loadU8(s[0])) }},
	{"load_u64", []api.ValueType{i64}, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = k.loadU64(s[0]) }},
	{"store_u8", []api.ValueType{i64, i32}, nil, func(k *Kernel, s []uint64) { k.storeU8(s[0], uint32(s[1])) }},
	{"store_u64", []api.ValueType{i64, i64}, nil, func(k *Kernel, s []uint64) { k.storeU64(s[0], s[1]) }},
	{"input_length", nil, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = k.inputLen }},
	{"input_offset", nil, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = k.input }},
	{"input_load_u8", []api.ValueType{i64}, []api.ValueType{i32}, func(k *Kernel, s []uint64) { s[0] = uint64(k.inputLoadU8(s[0])) }},
	{"input_load_u64", []api.ValueType{i64}, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = k.inputLoadU64(s[0]) }},
	{"input_set", []api.ValueType{i64, i64}, nil, func(k *Kernel, s []uint64) { k.input, k.inputLen = s[0], s[1] }},
	{"output_set", []api.ValueType{i64, i64}, nil, func(k *Kernel, s []uint64) { k.output, k.outputLen = s[0], s[1] }},
	{"output_length", nil, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = k.outputLen }},
	{"output_offset", nil, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = k.output }},
	{"error_set", []api.ValueType{i64}, nil, func(k *Kernel, s []uint64) { k.err = s[0] }},
	{"error_get", nil, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = k.err }},
	{"reset", nil, nil, func(k *Kernel, s []uint64) { k.Reset() }},
	{"memory_bytes", nil, []api.ValueType{i64}, func(k *Kernel, s []uint64) { s[0] = k.memoryBytes() }},
}
