package extism

import (
	"bytes"
	"log/slog"
	"math"
	"strings"
	"testing"
)

// TestLogFuncs: get_log_level answers the most verbose Extism level the
// logger records, and log_* log a block's text at their level only when
// the logger records it.
func TestLogFuncs(t *testing.T) {
	for _, tc := range []struct {
		name      string
		level     slog.Level
		wantLevel int32
		logged    []string // of log_debug, log_warn
	}{
		{"trace", slog.LevelDebug - 4, 0, []string{"debug", "warn"}},
		{"info", slog.LevelInfo, 2, []string{"warn"}},
		{"error", slog.LevelError, 4, nil},
		{"off", slog.LevelError + 1, math.MaxInt32, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			fs := map[string]Func{}
			for _, f := range LogFuncs(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: tc.level}))) {
				fs[f.Name] = f
			}
			k := NewKernel(1 << 10)
			s := make([]uint64, 1)
			fs["get_log_level"].Fn(&k, s)
			if got := int32(s[0]); got != tc.wantLevel {
				t.Errorf("get_log_level: got %d; want %d", got, tc.wantLevel)
			}
			for _, name := range []string{"debug", "warn"} {
				s[0] = k.Write([]byte("text-" + name))
				fs["log_"+name].Fn(&k, s)
			}
			var got []string
			for _, name := range []string{"debug", "warn"} {
				if strings.Contains(buf.String(), `msg="guest log" text=text-`+name) {
					got = append(got, name)
				}
			}
			if strings.Join(got, ",") != strings.Join(tc.logged, ",") {
				t.Errorf("logged %q; want %q (log: %s)", got, tc.logged, buf.String())
			}
		})
	}
}
