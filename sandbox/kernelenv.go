package sandbox

import (
	"bytes"
	"context"
	"log/slog"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sandbox/internal/extism"
)

const (
	i32 = api.ValueTypeI32
	i64 = api.ValueTypeI64
)

// envHostModule defines every function go-sdk v1.7.1 exports in
// extism:host/env, with its exact signature (a guest importing a function
// with another type, or one that is missing, fails to instantiate, as on
// go-sdk). The kernel functions (extism.Funcs) are Go stack functions over
// the calling guest's kernel; of the services, the logs are
// extism.LogFuncs, the vars extism.Vars, config and HTTP in services.go.
func envHostModule(hb wazero.HostModuleBuilder, b *nativeBackend) wazero.HostModuleBuilder {
	def := func(name string, params, results []api.ValueType, f func(g *nativeGuest, stack []uint64)) {
		hb.NewFunctionBuilder().WithGoFunction(api.GoFunc(func(ctx context.Context, stack []uint64) {
			f(guestOf(ctx), stack)
		}), params, results).Export(name)
	}
	// The kernel and the logs (sandbox/internal/extism).
	for _, fs := range [][]extism.Func{extism.Funcs, extism.LogFuncs(b.log)} {
		for _, f := range fs {
			fn := f.Fn
			hb.NewFunctionBuilder().WithGoFunction(api.GoFunc(func(ctx context.Context, stack []uint64) {
				fn(&guestOf(ctx).k, stack)
			}), f.Params, f.Results).Export(f.Name)
		}
	}

	// Services.
	def("config_get", []api.ValueType{i64}, []api.ValueType{i64}, func(g *nativeGuest, s []uint64) { s[0] = g.configGet(s[0]) })
	def("var_get", []api.ValueType{i64}, []api.ValueType{i64}, func(g *nativeGuest, s []uint64) { s[0] = g.vars.Get(&g.k, s[0]) })
	def("var_set", []api.ValueType{i64, i64}, nil, func(g *nativeGuest, s []uint64) { g.vars.Set(&g.k, s[0], s[1]) })
	def("http_status_code", nil, []api.ValueType{i32}, func(g *nativeGuest, s []uint64) { s[0] = api.EncodeI32(g.status) })
	def("http_headers", nil, []api.ValueType{i64}, func(g *nativeGuest, s []uint64) { s[0] = g.k.Write(g.headers) })
	hb.NewFunctionBuilder().WithGoFunction(api.GoFunc(func(ctx context.Context, s []uint64) {
		s[0] = guestOf(ctx).httpRequest(ctx, s[0], s[1])
	}), []api.ValueType{i64, i64}, []api.ValueType{i64}).Export("http_request")
	return hb
}

// ioHostModule defines mcphost's bulk copies (extism.IOFuncs) on the
// native kernel: each reaches the calling guest's kernel and memory.
func ioHostModule(hb wazero.HostModuleBuilder) wazero.HostModuleBuilder {
	for _, f := range extism.IOFuncs {
		fn := f.Fn
		hb.NewFunctionBuilder().WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, mod api.Module, stack []uint64) {
			fn(&guestOf(ctx).k, mod.Memory(), stack)
		}), f.Params, f.Results).Export(f.Name)
	}
	return hb
}

// userModule is the import module of the host functions.
const userModule = abi.HostNamespace

// userHostModule defines the host functions on the kernel.
func userHostModule(hb wazero.HostModuleBuilder, log *slog.Logger, lim Limits) wazero.HostModuleBuilder {
	for _, af := range abi.HostFuncs {
		h := hostFunc(af)
		var params, results []api.ValueType
		if h.Payload {
			params = []api.ValueType{i64}
		}
		if h.Reply {
			results = []api.ValueType{i64}
		}
		hb.NewFunctionBuilder().WithGoFunction(api.GoFunc(func(ctx context.Context, stack []uint64) {
			g := guestOf(ctx)
			var payload []byte
			if h.Payload {
				// A copy: the Peer may keep it past the call, and the
				// kernel's memory is reused.
				payload = bytes.Clone(g.k.Read(stack[0]))
			}
			if reply := h.serve(ctx, log, lim, payload, nil); h.Reply {
				stack[0] = g.k.Write(reply)
			}
		}), params, results).Export(h.Name)
	}
	return hb
}
