package systest

import (
	"os"
	"os/exec"
)

// BuildReactor builds the Go package pkg into out as a wasip1 reactor
// (-buildmode=c-shared), as plugins are built.
func BuildReactor(out, pkg string) error {
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		return &BuildErr{Err: err, Out: b}
	}
	return nil
}
