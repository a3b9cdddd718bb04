package extism

import (
	"context"
	"log/slog"
	"math"

	"github.com/tetratelabs/wazero/api"
)

// extismLevels are Extism's log levels in order, trace (0) to error (4),
// as slog levels.
var extismLevels = []slog.Level{slog.LevelDebug - 4, slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError}

// LogFuncs are the log services of EnvModule on log, which already
// carries the plugin attribute: get_log_level, and log_trace to
// log_error, each logging the text of a kernel block as a "guest log"
// line.
func LogFuncs(log *slog.Logger) []Func {
	fs := []Func{{"get_log_level", nil, []api.ValueType{i32}, func(_ *Kernel, s []uint64) { s[0] = api.EncodeI32(logLevel(log)) }}}
	for i, name := range []string{"log_trace", "log_debug", "log_info", "log_warn", "log_error"} {
		level := extismLevels[i]
		fs = append(fs, Func{name, []api.ValueType{i64}, nil, func(k *Kernel, s []uint64) {
			if log.Enabled(context.Background(), level) {
				log.LogAttrs(context.Background(), level, "guest log", slog.String("text", string(k.Read(s[0]))))
			}
		}})
	}
	return fs
}

// logLevel is get_log_level's answer: the most verbose Extism level log
// records (trace 0, debug 1, info 2, warn 3, error 4; off is MaxInt32).
func logLevel(log *slog.Logger) int32 {
	ctx := context.Background()
	for i, l := range extismLevels {
		if log.Enabled(ctx, l) {
			return int32(i)
		}
	}
	return math.MaxInt32
}
