//go:build unix && !linux

package source

import (
	"context"
	"os/exec"
	"syscall"
)

// buildCommand returns the command that runs name with args for a build:
// in a process group of its own, killed as a group when ctx ends. Only
// Linux can also tie the build to mcphost's life (buildproc_linux.go);
// here a build outlives a mcphost killed with SIGKILL.
func buildCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}
