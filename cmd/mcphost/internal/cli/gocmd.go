package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/mcphost/mcphost/plugins/source"
)

// cmdGo runs the go command in the current directory with the SDK this
// binary carries wired in (GOFLAGS=-modfile=… on a temporary copy of
// go.mod, as builds do), so a plugin's tests, vet and editor-less builds
// work without publishing or vendoring the SDK. The go command is found
// as for builds; its exit status passes through.
func cmdGo(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	const help = "usage: mcphost go GOARGS...\n\nruns the go command with the SDK this binary carries (e.g. mcphost go test ./...)\n"
	if wantsHelp(args) {
		fmt.Fprint(stdout, help)
		return flag.ErrHelp
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, help)
		return errUsage
	}
	goCmd, err := source.FindGo()
	if err != nil {
		return err
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	modfile, cleanup, err := source.SDKModfile(wd, buildCacheDir())
	if err != nil {
		return fmt.Errorf("prepare the SDK: %w", err)
	}
	defer cleanup()
	cmd := exec.CommandContext(ctx, goCmd, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.Env = os.Environ()
	if modfile != "" {
		flags := strings.TrimSpace(os.Getenv("GOFLAGS") + " -modfile=" + modfile)
		cmd.Env = append(cmd.Env, "GOFLAGS="+flags)
	}
	err = cmd.Run()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		return exitError(ee.ExitCode())
	}
	return err
}
