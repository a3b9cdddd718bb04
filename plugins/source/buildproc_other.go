//go:build !unix

package source

import (
	"context"
	"os/exec"
)

// buildCommand returns the command that runs name with args for a build,
// killed when ctx ends (its own children are not).
func buildCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, name, args...)
}
