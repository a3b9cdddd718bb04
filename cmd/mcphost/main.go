package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

const usage = `usage: mcphost <command> [flags]

commands:
  serve     serve MCP over stdio (the default when no command is given)
  validate  load every plugin and print what it provides
  call      run one tool through the whole stack: call <tool> ['<json args>']
  cache     show the size of the caches, or prune them: cache size|prune
  version   print the version

run 'mcphost <command> -h' for the flags of a command
`

// run is main without os.Exit, so testscript can drive it in-process.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var err error
	switch cmd {
	case "serve":
		err = cmdServe(ctx, args, stdin, stdout, stderr)
	case "validate":
		err = cmdValidate(ctx, args, stdout, stderr)
	case "call":
		err = cmdCall(ctx, args, stdout, stderr)
	case "cache":
		err = cmdCache(ctx, args, stdout, stderr)
	case "version":
		fmt.Fprintln(stdout, versionString())
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "mcphost: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.Is(err, errToolFailed):
		return 1
	default:
		fmt.Fprintf(stderr, "mcphost %s: %v\n", cmd, err)
		return 1
	}
}

var (
	errUsage      = errors.New("usage")
	errToolFailed = errors.New("tool returned isError")
)

// common holds the flags every subcommand shares.
type common struct {
	config    string
	logLevel  string
	logFormat string
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.config, "config", "", "plugins.toml to load (default: ./plugins.toml if present, else built-in defaults)")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&c.logFormat, "log-format", "text", "log format: text or json")
}

// logger builds the stderr slog logger the flags ask for.
func (c *common) logger(stderr io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", c.logLevel)
	}
	opts := &slog.HandlerOptions{Level: lvl}
	switch c.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(stderr, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(stderr, opts)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", c.logFormat)
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("mcphost "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}
