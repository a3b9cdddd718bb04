package systest

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// open lets the slow plugin's build go on: it writes a line to the gate
// (which blocks until the build reads it) and fails the test if no build
// comes to read it.
func (e *ReloadEnv) Open(t *testing.T) {
	t.Helper()
	done := make(chan error, 1)
	go func() { // ends once a build opens the gate, or when the test's process does
		f, err := os.OpenFile(filepath.Join(e.Dir, "gate"), os.O_WRONLY, 0)
		if err == nil {
			_, err = f.WriteString("go\n")
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(NoteTimeout):
		t.Fatalf("no build read the gate\nstderr:\n%s", e.Stderr())
	}
}
