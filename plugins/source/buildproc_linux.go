package source

import (
	"context"
	"os"
	"os/exec"
	"syscall"
)

// groupShell runs the go command for a build so that the whole build (go
// and the compilers and linker it starts) dies with mcphost. Pdeathsig
// reaches only the direct child, and go's own children would outlive go
// for as long as their package takes; so the direct child is a shell that
// turns the SIGTERM it gets when mcphost dies into a SIGKILL of its
// process group, then waits for go.
const (
	groupShell  = "/bin/sh"
	groupScript = `trap 'kill -KILL 0' TERM; "$0" "$@" & wait $!`
)

// buildCommand returns the command that runs name with args for a build:
// in a process group of its own, killed as a group when ctx ends, and
// killed as a group when mcphost dies, even by SIGKILL (Linux's
// PR_SET_PDEATHSIG).
//
// Linux sends the parent-death signal when the thread that started the
// child exits, not the process. Go ends a thread only when a goroutine
// exits while locked to it (runtime.LockOSThread without
// UnlockOSThread); nothing in mcphost or wazero does, so the signal comes
// when mcphost dies. Code that did would end a build in progress, which
// then fails ("exit status 137") and is tried again at the next load.
//
// Without /bin/sh, go itself gets SIGKILL when mcphost dies; the compile
// it is running finishes on its own.
func buildCommand(ctx context.Context, name string, args ...string) *exec.Cmd {
	var cmd *exec.Cmd
	sig := syscall.SIGTERM
	if p, err := exec.LookPath(name); err == nil {
		name = p // as exec.Command would run it, not as the shell would look it up
	}
	if _, err := os.Stat(groupShell); err == nil {
		cmd = exec.CommandContext(ctx, groupShell, append([]string{"-c", groupScript, name}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, name, args...)
		sig = syscall.SIGKILL
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: sig}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}
