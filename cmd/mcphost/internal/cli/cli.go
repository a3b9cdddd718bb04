package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"go.opentelemetry.io/otel/trace"

	"github.com/mcphost/mcphost/plugins/config"
)

// command is one entry of the command table. A command added here is
// dispatched by run and listed by --help.
type command struct {
	name    string
	args    string // the synopsis after the name
	summary string
	run     func(ctx context.Context, args []string, s streams) error
}

// streams are what a command reads and writes.
type streams struct {
	in          io.Reader
	out, stderr io.Writer
}

// commands is the command table, in the order --help lists it. It is set
// in init because each command's help reads it.
var commands []command

func init() {
	commands = []command{
		{"serve", "[flags]", "serve MCP over stdio, or HTTP with --http (the default command)",
			func(ctx context.Context, a []string, s streams) error { return cmdServe(ctx, a, s.in, s.out, s.stderr) }},
		{"new", "NAME [--lang " + strings.Join(kitLangs(), "|") + "] [--dir D]", "scaffold a plugin in one of the kits' languages (" + strings.Join(kitLangs(), ", ") + "): a tool, a test, a plugins.toml",
			func(ctx context.Context, a []string, s streams) error { return cmdNew(ctx, a, s.out, s.stderr) }},
		{"validate", "[--json]", "load every plugin and print what it provides (--json: machine-readable)",
			func(ctx context.Context, a []string, s streams) error { return cmdValidate(ctx, a, s.out, s.stderr) }},
		{"verify", "SOURCE (--identity SAN --issuer URL | --key FILE)", "check the Sigstore signature of a plugin (an oci reference, an https url or a local .wasm with its bundle) without serving it",
			func(ctx context.Context, a []string, s streams) error { return cmdVerify(ctx, a, s.out, s.stderr) }},
		{"call", "TOOL ['{json args}']", "run one tool through the whole stack and print its result",
			func(ctx context.Context, a []string, s streams) error { return cmdCall(ctx, a, s.out, s.stderr) }},
		{"read", "URI", "read one resource and print it",
			func(ctx context.Context, a []string, s streams) error { return cmdRead(ctx, a, s.out, s.stderr) }},
		{"prompt", "NAME ['{json args}']", "get one prompt and print it",
			func(ctx context.Context, a []string, s streams) error { return cmdPrompt(ctx, a, s.out, s.stderr) }},
		{"lists", "FILE [--embed [--dynamic REASON]]", "show, or write (--embed), the lists section that lets a first start list a plugin without running it",
			func(ctx context.Context, a []string, s streams) error { return cmdLists(ctx, a, s.out, s.stderr) }},
		{"go", "GOARGS...", "run the go command with the SDK this binary carries (e.g. mcphost go test ./...)",
			func(ctx context.Context, a []string, s streams) error { return cmdGo(ctx, a, s.in, s.out, s.stderr) }},
		{"cache", "size|prune [--max SIZE]", "show the size of the caches, or prune them (least recently used first)",
			func(ctx context.Context, a []string, s streams) error { return cmdCache(ctx, a, s.out, s.stderr) }},
		{"grants", "list|revoke PLUGIN [HOST:PORT|PATH]", "show or remove what a person allowed plugins beyond allowed_hosts (plugins.grants.toml, or the [server] store)",
			func(ctx context.Context, a []string, s streams) error { return cmdGrants(ctx, a, s.out, s.stderr) }},
		{"version", "", "print the version (also --version)",
			func(_ context.Context, a []string, s streams) error { return cmdVersion(a, s.out, s.stderr) }},
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, "usage: mcphost <command> [flags] [arguments]\n\nmcphost serves MCP tools, resources and prompts from sandboxed WebAssembly plugins.\n\ncommands:\n")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-9s %s\n  %-9s   %s\n", c.name, c.args, "", c.summary)
	}
	fmt.Fprint(w, "  help      print this help (also -h, --help)\n\nrun 'mcphost <command> -h' for the flags of a command\n")
}

// Run runs the mcphost command line args (without the program name) and
// returns the exit status: main without os.Exit.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	name := "serve"
	if len(args) > 0 {
		switch args[0] {
		case "help", "-h", "-help", "--help":
			usage(stdout)
			return 0
		case "-version", "--version":
			fmt.Fprintln(stdout, versionString())
			return 0
		}
		if args[0] != "" && args[0][0] != '-' {
			name, args = args[0], args[1:]
		} else if i := slices.IndexFunc(args, isCommand); i > 0 {
			// Flags before the command (mcphost --config x validate):
			// they are the command's.
			name, args = args[i], slices.Delete(slices.Clone(args), i, i+1)
		}
	}
	i := slices.IndexFunc(commands, func(c command) bool { return c.name == name })
	if i < 0 {
		names := []string{"help"}
		for _, c := range commands {
			names = append(names, c.name)
		}
		if hint := config.Suggest(name, names); hint != "" {
			fmt.Fprintf(stderr, "mcphost: unknown command %q (did you mean %q?)\n\n", name, hint)
		} else {
			fmt.Fprintf(stderr, "mcphost: unknown command %q\n\n", name)
		}
		usage(stderr)
		return 2
	}
	ctx, stop := shutdownContext(stderr)
	defer stop()

	err := commands[i].run(ctx, args, streams{stdin, stdout, stderr})
	var exit exitError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.Is(err, errToolFailed):
		return 1
	case errors.As(err, &exit):
		return int(exit)
	default:
		fmt.Fprintf(stderr, "mcphost %s: %v\n", name, err)
		return 1
	}
}

// isCommand reports whether arg names a command other than the default.
func isCommand(arg string) bool {
	return arg != "serve" && slices.ContainsFunc(commands, func(c command) bool { return c.name == arg })
}

// cmdVersion prints the version; -h prints its usage.
func cmdVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", stdout, stderr)
	if err := fs.parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "mcphost version: unexpected arguments %q\n\n", fs.Args())
		fs.Usage()
		return errUsage
	}
	fmt.Fprintln(stdout, versionString())
	return nil
}

// shutdownContext returns a context that the first SIGINT or SIGTERM
// cancels: the command finishes its work and stops (serve stops reading,
// answers the calls in flight within [server] shutdown_grace, and exits 0).
// A second signal ends the process at once, with the status a shell gives
// a process killed by that signal (130 for SIGINT, 143 for SIGTERM), for
// whoever will not wait. stop releases the signals.
func shutdownContext(stderr io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { // ends with stop, or the process
		select {
		case <-sigs:
			cancel()
		case <-done:
			return
		}
		select {
		case sig := <-sigs:
			fmt.Fprintf(stderr, "mcphost: second signal (%v): exiting now, without waiting for the work in flight\n", sig)
			code := 1
			if s, ok := sig.(syscall.Signal); ok {
				code = 128 + int(s)
			}
			os.Exit(code)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

// exitError passes a child's exit status through (mcphost go).
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

var (
	errUsage      = errors.New("usage")
	errToolFailed = errors.New("tool returned isError")
)

// common holds the flags every subcommand shares.
type common struct {
	config    string
	logLevel  string
	logFormat string
	tracer    trace.Tracer // serve's sandbox traces (traces.go); nil: none
	// interpret: serve new code on the interpreter until it is compiled
	// (serve's; sandbox.EngineOptions.InterpretUntilCompiled).
	interpret bool
}

func (c *common) register(fs *flags) {
	fs.StringVar(&c.config, "config", os.Getenv("MCPHOST_CONFIG"), "plugins.toml to load (default: $MCPHOST_CONFIG, else ./plugins.toml if present, else built-in defaults)")
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

// flags is a command's flag set. Every command's help has one shape (the
// usage line and summary from the command table, its flags, then more),
// and goes to stdout with exit status 0 when asked for (-h, --help), or to
// stderr with exit status 2 after a usage error.
type flags struct {
	*flag.FlagSet
	name           string // the command as typed: "read", "cache prune"
	more           string // text after the flags, if any
	stdout, stderr io.Writer
}

func newFlags(name string, stdout, stderr io.Writer) *flags {
	f := &flags{FlagSet: flag.NewFlagSet("mcphost "+name, flag.ContinueOnError), name: name, stdout: stdout, stderr: stderr}
	f.SetOutput(stderr)
	f.Usage = func() { f.help(stderr) }
	return f
}

// newGroupFlags starts a command made of subcommands (cache, grants): with
// no subcommand it prints usage and fails, with only -h it prints usage as
// help, and otherwise it returns the flags of subcommand args[0], whose
// help ends with usage.
func newGroupFlags(name, usage string, args []string, stdout, stderr io.Writer) (*flags, error) {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return nil, errUsage
	}
	if wantsHelp(args) {
		fmt.Fprint(stdout, usage)
		return nil, flag.ErrHelp
	}
	f := newFlags(name+" "+args[0], stdout, stderr)
	f.more = usage
	return f, nil
}

// help writes the command's help to w.
func (f *flags) help(w io.Writer) {
	base, sub, _ := strings.Cut(f.name, " ")
	if i := slices.IndexFunc(commands, func(c command) bool { return c.name == base }); i >= 0 {
		c := commands[i]
		args := c.args
		if sub != "" {
			args = sub + " [flags]"
		}
		fmt.Fprintf(w, "usage: mcphost %s %s\n\n%s\n", c.name, args, c.summary)
	}
	any := false
	f.VisitAll(func(*flag.Flag) { any = true })
	if any {
		fmt.Fprint(w, "\nflags:\n")
		f.SetOutput(w)
		f.PrintDefaults()
		f.SetOutput(f.stderr)
	}
	if f.more != "" {
		fmt.Fprint(w, "\n"+f.more)
	}
}

// parse parses args. -h and --help print the help to stdout and return
// flag.ErrHelp; a bad flag prints what is wrong (an unknown flag with the
// closest one the command has) and the help to stderr, and returns
// errUsage.
func (f *flags) parse(args []string) error {
	f.Usage = func() {}
	f.SetOutput(io.Discard) // the message is ours, below
	err := f.FlagSet.Parse(args)
	f.SetOutput(f.stderr)
	f.Usage = func() { f.help(f.stderr) }
	switch {
	case errors.Is(err, flag.ErrHelp):
		f.help(f.stdout)
		return err
	case err != nil:
		msg := err.Error()
		if bad, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
			var names []string
			f.VisitAll(func(fl *flag.Flag) { names = append(names, fl.Name) })
			msg = fmt.Sprintf("unknown flag --%s", bad)
			if hint := config.Suggest(bad, names); hint != "" {
				msg += fmt.Sprintf(" (did you mean --%s?)", hint)
			}
		}
		fmt.Fprintf(f.stderr, "mcphost %s: %s\n\n", f.name, msg)
		f.help(f.stderr)
		return errUsage
	}
	return nil
}

// parseOperands parses args whose flags may come before, between or
// after the operands (as synopses write them) and returns the operands.
func (f *flags) parseOperands(args []string) ([]string, error) {
	var operands []string
	for {
		if err := f.parse(args); err != nil {
			return nil, err
		}
		if f.NArg() == 0 {
			return operands, nil
		}
		operands = append(operands, f.Arg(0))
		args = f.Args()[1:]
	}
}

// wantsHelp reports whether args ask for help alone (-h, --help), for
// commands that pass their arguments on (go).
func wantsHelp(args []string) bool {
	return len(args) == 1 && slices.Contains([]string{"-h", "-help", "--help"}, args[0])
}
