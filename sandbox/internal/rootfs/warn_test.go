package rootfs

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestWarnerRateLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &bytes.Buffer{}
		w := NewWarner(slog.New(slog.NewTextHandler(logs, nil)), "evil", 3, time.Minute)
		for range 10 {
			w.Warn("open", "/w/leak", "path leaves the mount")
		}
		if n := strings.Count(logs.String(), "level=WARN"); n != 3 {
			t.Fatalf("after 10 attempts: %d warnings; want the first 3\n%s", n, logs)
		}
		time.Sleep(time.Minute) // fake clock: synctest advances it
		w.Warn("open", "/w/leak", "path leaves the mount")
		w.Warn("open", "/w/leak", "path leaves the mount")
		lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
		if len(lines) != 4 || !strings.Contains(lines[3], "suppressed=7") || !strings.Contains(lines[3], "plugin=evil") {
			t.Errorf("a minute later: got\n%s\nwant one more line with suppressed=7", logs)
		}
	})
}
