package source

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mcphost/mcphost/plugins/internal/progress"
)

// CommandOptions configure a [Command].
type CommandOptions struct {
	// Argv is the build command, run without a shell in Dir.
	Argv []string
	Dir  string
	// Watch are absolute globs of the build's sources; the build runs
	// when one of them is newer than Artefact. Without any, it runs only
	// when Artefact is missing.
	Watch []string
	// Artefact is the .wasm file the build writes.
	Artefact string
	// Logger receives the build's progress and each line it prints (see
	// [LogBuildOutput]); nil means none is logged.
	Logger *slog.Logger
	Plugin string // names the plugin in logs
}

// Command is a plugin built by a command of its own (build = … in
// plugins.toml), in any language: Fetch runs the command when its
// artefact is missing or older than one of its watched sources, and
// returns the artefact.
type Command struct{ opts CommandOptions }

// NewCommand returns the source of a plugin built by opts.Argv.
func NewCommand(opts CommandOptions) Command { return Command{opts} }

// Fetch builds the artefact when it is stale and returns its path. The
// build runs in a process group of its own that is killed when ctx ends
// (a newer save: the reload it belongs to is cancelled) and when mcphost
// dies. A failed build is a *BuildError holding what the build printed,
// the compiler's error lines; the artefact, whatever it holds, is not
// used then.
func (c Command) Fetch(ctx context.Context) (string, error) {
	o := c.opts
	why := c.stale()
	if why == "" {
		return o.Artefact, nil
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log.Debug("plugin build needed", "plugin", o.Plugin, "why", why)
	before, _ := os.Stat(o.Artefact)
	done := progress.Track(ctx, o.Logger, o.Plugin, "build", slog.LevelInfo)
	err := c.run(ctx, log)
	done(err)
	if err != nil {
		if ctx.Err() != nil {
			log.Info("plugin build cancelled", "plugin", o.Plugin, "err", context.Cause(ctx))
		}
		return "", err
	}
	after, err := os.Stat(o.Artefact)
	switch {
	case err != nil:
		return "", &BuildError{Dir: o.Dir, Err: fmt.Errorf("%s succeeded but wrote no %s: %w", o.Argv[0], o.Artefact, err)}
	case before != nil && after.ModTime().Equal(before.ModTime()) && after.Size() == before.Size():
		return "", &BuildError{Dir: o.Dir, Err: fmt.Errorf("%s succeeded but did not rewrite %s (%s)", o.Argv[0], o.Artefact, why)}
	}
	return o.Artefact, nil
}

// stale says why the artefact needs a build, or "" when it does not:
// missing, or older than a watched source (the newest is named).
func (c Command) stale() string {
	fi, err := os.Stat(c.opts.Artefact)
	if err != nil {
		return "no " + filepath.Base(c.opts.Artefact) + " yet"
	}
	for _, g := range c.opts.Watch {
		files, _ := filepath.Glob(g) // validated by the config
		for _, f := range files {
			if f == c.opts.Artefact || strings.HasPrefix(filepath.Base(f), ".") {
				continue
			}
			if sfi, err := os.Stat(f); err == nil && sfi.Mode().IsRegular() && sfi.ModTime().After(fi.ModTime()) {
				return filepath.Base(f) + " is newer than " + filepath.Base(c.opts.Artefact)
			}
		}
	}
	return ""
}

// run runs the build command, its output logged line by line.
func (c Command) run(ctx context.Context, log *slog.Logger) error {
	o := c.opts
	cmd := buildCommand(ctx, o.Argv[0], o.Argv[1:]...)
	cmd.Dir = o.Dir
	out := LogBuildOutput(ctx, log, o.Plugin)
	cmd.Stdout, cmd.Stderr = out, out // one pipe: the lines keep their order
	// A process that left the group and kept the pipe open must not hold
	// the reload forever once the group is killed.
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	out.Close()
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		err = fmt.Errorf("%s: %w", strings.Join(o.Argv, " "), err)
		if hint := npmHint(o.Dir); hint != "" {
			err = fmt.Errorf("%w; %s", err, hint)
		}
		return &BuildError{Dir: o.Dir, Output: out.Kept(), Err: err}
	}
	return nil
}

// npmHint explains the likeliest cause of a failed build in a Node
// project (the AssemblyScript and TypeScript kits): its packages were
// never installed, so the build's tools (asc, tsc, componentize-js) are
// "not found". It returns "" when dir has no package.json or has
// node_modules.
func npmHint(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, "package.json")); err != nil {
		return ""
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err == nil {
		return ""
	}
	return fmt.Sprintf("%s has a package.json but no node_modules: run npm install in %s", dir, dir)
}

// maxKeptOutput bounds the output a BuildError keeps: the compiler's
// first errors, not megabytes of a runaway build.
const maxKeptOutput = 16 << 10

// OutputLog is what [LogBuildOutput] returns.
type OutputLog struct {
	ctx    context.Context
	log    *slog.Logger
	plugin string

	mu      sync.Mutex
	partial []byte // a line not ended yet
	kept    bytes.Buffer
	cut     bool // kept was cut short
}

// LogBuildOutput returns a writer for a build's output that logs every
// line as it comes ("plugin build output", at Info, with plugin and
// line: cmd/mcphost also sends these to clients) and keeps the first
// 16 KiB for the error of a failed build ([OutputLog.Kept]). Close flushes
// a last unended line.
func LogBuildOutput(ctx context.Context, log *slog.Logger, plugin string) *OutputLog {
	return &OutputLog{ctx: ctx, log: log, plugin: plugin}
}

func (w *OutputLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := maxKeptOutput - w.kept.Len(); n > 0 {
		w.kept.Write(p[:min(n, len(p))])
		w.cut = w.cut || len(p) > n
	} else {
		w.cut = true
	}
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		w.line(w.partial[:i])
		w.partial = w.partial[i+1:]
	}
	return len(p), nil
}

func (w *OutputLog) line(b []byte) {
	if s := strings.TrimRight(string(b), "\r"); strings.TrimSpace(s) != "" {
		w.log.Log(context.WithoutCancel(w.ctx), slog.LevelInfo, "plugin build output", "plugin", w.plugin, "line", s)
	}
}

// Close logs a last line that did not end with a newline.
func (w *OutputLog) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) > 0 {
		w.line(w.partial)
		w.partial = nil
	}
	return nil
}

// Kept returns the output kept for an error.
func (w *OutputLog) Kept() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.kept.String()
	if w.cut {
		s += "\n[… output cut at 16 KiB]"
	}
	return s
}
