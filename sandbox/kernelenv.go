package sandbox

import (
	"context"
	"log/slog"
	"math"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

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
// the calling guest's kernel; the services (config, vars, HTTP, logs) are
// in services.go.
func envHostModule(hb wazero.HostModuleBuilder, b *nativeBackend) wazero.HostModuleBuilder {
	def := func(name string, params, results []api.ValueType, f func(g *nativeGuest, stack []uint64)) {
		hb.NewFunctionBuilder().WithGoFunction(api.GoFunc(func(ctx context.Context, stack []uint64) {
			f(guestOf(ctx), stack)
		}), params, results).Export(name)
	}
	// The kernel (sandbox/internal/extism).
	for _, f := range extism.Funcs {
		fn := f.Fn
		hb.NewFunctionBuilder().WithGoFunction(api.GoFunc(func(ctx context.Context, stack []uint64) {
			fn(&guestOf(ctx).k, stack)
		}), f.Params, f.Results).Export(f.Name)
	}

	// Services.
	def("config_get", []api.ValueType{i64}, []api.ValueType{i64}, func(g *nativeGuest, s []uint64) { s[0] = g.configGet(s[0]) })
	def("var_get", []api.ValueType{i64}, []api.ValueType{i64}, func(g *nativeGuest, s []uint64) { s[0] = g.varGet(s[0]) })
	def("var_set", []api.ValueType{i64, i64}, nil, func(g *nativeGuest, s []uint64) { g.varSet(s[0], s[1]) })
	def("http_status_code", nil, []api.ValueType{i32}, func(g *nativeGuest, s []uint64) { s[0] = api.EncodeI32(g.status) })
	def("http_headers", nil, []api.ValueType{i64}, func(g *nativeGuest, s []uint64) { s[0] = g.k.Write(g.headers) })
	hb.NewFunctionBuilder().WithGoFunction(api.GoFunc(func(ctx context.Context, s []uint64) {
		s[0] = guestOf(ctx).httpRequest(ctx, s[0], s[1])
	}), []api.ValueType{i64, i64}, []api.ValueType{i64}).Export("http_request")
	def("get_log_level", nil, []api.ValueType{i32}, func(g *nativeGuest, s []uint64) { s[0] = api.EncodeI32(logLevel(b.log)) })
	for name, level := range map[string]slog.Level{
		"log_trace": slog.LevelDebug - 4, "log_debug": slog.LevelDebug, "log_info": slog.LevelInfo,
		"log_warn": slog.LevelWarn, "log_error": slog.LevelError,
	} {
		def(name, []api.ValueType{i64}, nil, func(g *nativeGuest, s []uint64) {
			if b.log.Enabled(context.Background(), level) {
				b.log.LogAttrs(context.Background(), level, "guest log", slog.String("text", string(g.k.Read(s[0]))))
			}
		})
	}
	return hb
}

// logLevel is get_log_level's answer: the most verbose Extism level the
// logger records (trace 0, debug 1, info 2, warn 3, error 4; off is
// MaxInt32).
func logLevel(log *slog.Logger) int32 {
	ctx := context.Background()
	for i, l := range []slog.Level{slog.LevelDebug - 4, slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError} {
		if log.Enabled(ctx, l) {
			return int32(i)
		}
	}
	return math.MaxInt32
}
