package watch

import (
	"log/slog"
	"os"
	"testing"
)

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func write(t testing.TB, file, data string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
