package wasip2

import (
	"log/slog"

	"github.com/mcphost/mcphost/sandbox/internal/component"
)

// addLogging serves wasi:logging/logging: a guest's log line goes to the
// plugin's logger as "guest log", as an Extism plugin's log_info does,
// with its context when it gives one. critical is logged above error.
func addLogging(add func(iface, name string, f component.HostFunc)) {
	levels := []slog.Level{slog.LevelDebug - 4, slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError, slog.LevelError + 4}
	add("wasi:logging/logging", "log", func(hc *component.HostCall, args []any) (any, error) {
		log := stateOf(hc).Log
		level := levels[min(int(args[0].(component.Case).Index), len(levels)-1)]
		if log == nil || !log.Enabled(hc.Ctx, level) {
			return nil, nil
		}
		attrs := []slog.Attr{slog.String("text", args[2].(string))}
		if c := args[1].(string); c != "" {
			attrs = append(attrs, slog.String("context", c))
		}
		log.LogAttrs(hc.Ctx, level, "guest log", attrs...)
		return nil, nil
	})
}
