package plugins

import (
	"log/slog"
	"os"
	"os/exec"
	"testing"
	"time"
)

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func write(t testing.TB, file, data string) {
	t.Helper()
	if err := os.WriteFile(file, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// needGo skips tests that build Wasm when there is no go command, or with
// -short.
func needGo(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command on PATH")
	}
	if testing.Short() {
		t.Skip("builds Wasm; skipped with -short")
	}
}

// batchTimeout bounds the wait for a reload that must come; it is a
// failure bound, never a synchronisation delay.
const batchTimeout = 30 * time.Second

// nextReport returns the next report from reports, failing t when none
// comes within batchTimeout.
func nextReport(t *testing.T, reports <-chan ReloadReport) ReloadReport {
	t.Helper()
	select {
	case rep := <-reports:
		return rep
	case <-time.After(batchTimeout):
		t.Fatalf("no reload within %v", batchTimeout)
		return ReloadReport{}
	}
}
