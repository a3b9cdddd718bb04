package source

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/internal/cachefile"
	"github.com/mcphost/mcphost/plugins/internal/progress"
)

// buildRecipe changes whenever the way BuildGo builds changes, so that
// older cache entries are not reused.
const buildRecipe = "mcphost-gobuild-2: go build -buildmode=c-shared (GOOS=wasip1 GOARCH=wasm), embedded SDK via -modfile"

// BuildError is a failed build of a Go-source plugin.
type BuildError struct {
	Dir    string // the package directory
	Output string // what the go command printed (the compiler's errors)
	Err    error
}

func (e *BuildError) Error() string {
	msg := fmt.Sprintf("build %s: %v", e.Dir, e.Err)
	if out := strings.TrimSpace(e.Output); out != "" {
		msg += "\n" + out
	}
	return msg
}

func (e *BuildError) Unwrap() error { return e.Err }

// BuildOptions configure [BuildGo].
type BuildOptions struct {
	// CacheDir holds the built modules, the index that lets a cached build
	// be found without the go command, and the extracted SDK. "" means
	// os.UserCacheDir()/mcphost/build.
	CacheDir string
	// Go is the go command to run when a build is needed; "" means
	// [FindGo]. It is not needed (and not looked for) on a cache hit.
	Go string
	// Logger receives build progress (plugin, step, elapsed). nil means
	// no progress is logged.
	Logger *slog.Logger
	// Plugin names the plugin in progress logs.
	Plugin string
	// AfterBuild, when not nil, runs on each file the go command builds,
	// before it goes into the cache (where its SHA-256 is recorded): the
	// step that writes the plugin's lists section (package plugins). An
	// error fails the build; a cached build does not run it again.
	AfterBuild func(ctx context.Context, file string) error
}

// BuildGo builds the Go main package in dir as a Wasm reactor
// (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared) and returns the
// path of the .wasm file in the cache. The rest of the environment
// (GOFLAGS, GOCACHE, GOPATH, GOPROXY, …) is inherited.
//
// # The SDK
//
// When the plugin's go.mod requires github.com/mcphost/mcphost and does
// not replace it itself, the build uses the SDK this binary carries
// (the root package mcphost embeds it): the go command gets -modfile with a copy of
// go.mod that adds a replace to the extracted SDK. The plugin's own files
// are never edited, the build needs no network for the SDK, and the guest
// speaks the ABI of the host that runs it. A replace of its own (to a
// directory or to a published version) opts a plugin out.
//
// # The cache
//
// Builds are cached by content. The key is a SHA-256 over the go
// command's version and its GOFLAGS, GOEXPERIMENT and GOWORK, and over
// every package the plugin imports (go list -deps, evaluated for wasip1):
// for local packages (the main module, a workspace, a module replaced by a
// directory, the embedded SDK) the contents of their files and of their
// module's go.mod and go.sum; for other modules their path and version,
// whose content the module cache keeps immutable.
//
// Computing that key needs the go command, so every build also writes an
// index entry, keyed by the plugin directory, the SDK and the go
// environment variables, that records every local file that went into
// the build with its hash, the names in every local package directory,
// and the Go version. When every recorded file still hashes the same, no
// file was added to or removed from those directories, and the Go version
// is unchanged (read from the VERSION file of the go command that would
// run, when one is found), the cached module is served without running go
// at all: a cached plugin needs no Go installation.
//
// The output is written to a temporary file and renamed into place, so
// concurrent builds and crashes never leave a partial file, and its
// SHA-256 is recorded beside it ([cachefile.Record]) for the loader to
// check before use ([Cache.Check]).
func BuildGo(ctx context.Context, dir string, opts BuildOptions) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", &BuildError{Dir: dir, Err: err}
	}
	dir = abs
	cacheDir := opts.CacheDir
	if cacheDir == "" {
		ucd, err := os.UserCacheDir()
		if err != nil {
			return "", &BuildError{Dir: dir, Err: fmt.Errorf("no cache directory: %w", err)}
		}
		cacheDir = filepath.Join(ucd, "mcphost", "build")
	}
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return "", &BuildError{Dir: dir, Err: err}
	}
	mod, err := readModule(dir)
	if err != nil {
		return "", &BuildError{Dir: dir, Err: err}
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if refreshed, err := refreshSDKCopy(mod); err != nil {
		return "", &BuildError{Dir: dir, Err: err}
	} else if refreshed {
		log.Info("go build: wrote this mcphost's SDK into the plugin's copy", "plugin", opts.Plugin, "dir", mod.sdkCopy)
	}
	idxFile := filepath.Join(cacheDir, "index-"+indexKey(dir, mod)+".json")
	cached, found := cachedBuild(idxFile, cacheDir, opts.Go)
	if found == indexHit {
		log.Debug("go build cached; go not run", "plugin", opts.Plugin, "wasm", cached)
		return cached, nil
	}
	goCmd, err := goCommand(opts.Go)
	if err != nil {
		if found == indexEnvOnly {
			log.Warn("serving a build made under other go settings: no go command to rebuild with",
				"plugin", opts.Plugin, "vars", strings.Join(goEnvVars[:], ","))
			return cached, nil
		}
		return "", &BuildError{Dir: dir, Err: err}
	}
	if opts.Go == "" {
		if p, perr := exec.LookPath("go"); perr != nil || p != goCmd {
			log.Info("go command found outside PATH", "plugin", opts.Plugin, "go", goCmd)
		}
	}
	log.Debug("go build: running go list", "plugin", opts.Plugin, "go", goCmd)
	b := &goBuild{dir: dir, goCmd: goCmd, cacheDir: cacheDir, log: log, plugin: opts.Plugin, after: opts.AfterBuild}
	done := progress.Track(ctx, opts.Logger, opts.Plugin, "build", slog.LevelInfo)
	out, err := b.keyAndBuild(ctx, mod)
	done(err)
	if err != nil {
		return "", err
	}
	return out, nil
}

// goCommand returns the go command to build with: configured, when set
// (never another, so that a wrong setting is reported rather than hidden by
// a different go), else what [FindGo] finds. The error is a
// *GoNotFoundError.
func goCommand(configured string) (string, error) {
	if configured == "" {
		return FindGo()
	}
	if _, err := exec.LookPath(configured); err != nil {
		return "", &GoNotFoundError{Configured: configured}
	}
	return configured, nil
}

// keyAndBuild computes the cache key with the go command, builds unless
// the module is cached under it, and writes the index entry.
func (b *goBuild) keyAndBuild(ctx context.Context, mod *moduleInfo) (string, error) {
	if mod.embedSDK {
		tmp, err := os.MkdirTemp(b.cacheDir, ".modfile-")
		if err != nil {
			return "", &BuildError{Dir: b.dir, Err: err}
		}
		defer os.RemoveAll(tmp)
		if h, err := lease(tmp); err == nil { // kept from RemoveLeftovers while go runs
			defer h.Close()
		}
		if b.modfile, err = sdkModfile(b.cacheDir, mod, tmp); err != nil {
			return "", &BuildError{Dir: b.dir, Err: err}
		}
		b.tmp = tmp
	}
	key, idx, err := b.sourceKey(ctx)
	if err != nil {
		return "", err
	}
	idx.Wasm = key + ".wasm"
	out := filepath.Join(b.cacheDir, idx.Wasm)
	if fi, err := os.Stat(out); err != nil || !fi.Mode().IsRegular() {
		if err := b.build(ctx, out); err != nil {
			return "", err
		}
	}
	idx.write(filepath.Join(b.cacheDir, "index-"+indexKey(b.dir, mod)+".json")) // best effort: without it the next start runs go list again
	return out, nil
}

// goBuild is one run of the go command over a plugin.
type goBuild struct {
	dir      string
	goCmd    string
	cacheDir string
	modfile  string // "" or the -modfile that wires in the embedded SDK
	tmp      string // a temporary directory removed after the build
	log      *slog.Logger
	plugin   string
	after    func(ctx context.Context, file string) error // BuildOptions.AfterBuild
	// saidCache is set once goCacheFallback has logged its directory.
	saidCache bool
}

func (b *goBuild) build(ctx context.Context, out string) error {
	tmp, err := os.MkdirTemp(filepath.Dir(out), ".build-")
	if err != nil {
		return &BuildError{Dir: b.dir, Err: err}
	}
	defer os.RemoveAll(tmp)
	// The lease keeps RemoveLeftovers (of this or another process) from
	// taking the directory away while the build runs.
	if h, err := lease(tmp); err == nil {
		defer h.Close()
	}
	built := filepath.Join(tmp, "plugin.wasm")
	if _, err := b.run(ctx, "build", "-buildmode=c-shared", "-o", built, "."); err != nil {
		return err
	}
	if b.after != nil {
		if err := b.after(ctx, built); err != nil {
			return &BuildError{Dir: b.dir, Err: err}
		}
	}
	// The record goes first: the module is never in place without it.
	sum, err := cachefile.SumOf(built)
	if err == nil {
		err = cachefile.Record(out, sum)
	}
	if err == nil {
		err = os.Rename(built, out)
	}
	if err != nil {
		return &BuildError{Dir: b.dir, Err: err}
	}
	return nil
}

// run runs the go command in the plugin's directory for wasip1/wasm and
// returns its standard output; what it prints on standard error (the
// compiler's errors) is logged line by line as it comes, as for build
// commands ([LogBuildOutput]), and a failure is a *BuildError holding it.
// Subcommands that load packages get the -modfile.
func (b *goBuild) run(ctx context.Context, args ...string) ([]byte, error) {
	if b.modfile != "" && args[0] != "env" {
		args = slices.Insert(args, 1, "-modfile="+b.modfile)
	}
	cmd := buildCommand(ctx, b.goCmd, args...)
	cmd.Dir = b.dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if dir := b.goCacheFallback(); dir != "" {
		cmd.Env = append(cmd.Env, "GOCACHE="+dir)
	}
	var stdout bytes.Buffer
	stderr := LogBuildOutput(ctx, b.log, b.plugin)
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	err := cmd.Run()
	stderr.Close()
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, &BuildError{Dir: b.dir, Output: stderr.Kept(), Err: fmt.Errorf("go %s: %w", args[0], err)}
	}
	return stdout.Bytes(), nil
}

// goCacheFallback returns the GOCACHE to give the go command when it would
// find none (no GOCACHE, XDG_CACHE_HOME or HOME: a service, or env -i),
// beside mcphost's own build cache; "" when it finds its own. It says so
// once per build.
func (b *goBuild) goCacheFallback() string {
	for _, k := range []string{"GOCACHE", "XDG_CACHE_HOME", "HOME"} {
		if os.Getenv(k) != "" {
			return ""
		}
	}
	dir := filepath.Join(filepath.Dir(b.cacheDir), "gocache")
	if !b.saidCache {
		b.saidCache = true
		b.log.Info("no GOCACHE, XDG_CACHE_HOME or HOME: the go command caches its builds beside mcphost's", "plugin", b.plugin, "gocache", dir)
	}
	return dir
}

// listedPackage is the part of go list's output the cache key needs.
type listedPackage struct {
	ImportPath string
	Dir        string
	Standard   bool
	Module     *struct {
		Path, Version, Dir, GoMod string
		Main                      bool
		Replace                   *struct{ Path, Version, Dir string }
	}
	GoFiles, CgoFiles, EmbedFiles, OtherFiles, SFiles, HFiles, SysoFiles []string
}

// sourceKey computes BuildGo's cache key for the plugin, and the index
// entry that finds the same key again without the go command.
func (b *goBuild) sourceKey(ctx context.Context) (string, *buildIndex, error) {
	idx := &buildIndex{Env: buildEnv(), Files: map[string]string{}, Dirs: map[string]string{}}
	h := sha256.New()
	fmt.Fprintln(h, buildRecipe)
	env, err := b.run(ctx, "env", "GOVERSION", "GOFLAGS", "GOEXPERIMENT", "GOWORK")
	if err != nil {
		return "", nil, err
	}
	h.Write(env)
	lines := strings.Split(string(env), "\n")
	idx.GoVersion = strings.TrimSpace(lines[0])
	if len(lines) > 3 && strings.TrimSpace(lines[3]) != "" {
		if err := idx.addFile(nil, strings.TrimSpace(lines[3]), ""); err != nil {
			return "", nil, &BuildError{Dir: b.dir, Err: err}
		}
	}
	list, err := b.run(ctx, "list", "-e", "-deps",
		"-json=ImportPath,Dir,Standard,Module,GoFiles,CgoFiles,EmbedFiles,OtherFiles,SFiles,HFiles,SysoFiles", ".")
	if err != nil {
		return "", nil, err
	}
	hashedMods := map[string]bool{}
	d := json.NewDecoder(bytes.NewReader(list))
	for {
		var p listedPackage
		if err := d.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return "", nil, &BuildError{Dir: b.dir, Err: fmt.Errorf("read go list output: %w", err)}
		}
		if p.Standard {
			continue
		}
		m := p.Module
		local := m == nil || m.Main || m.Replace != nil && m.Replace.Version == ""
		if !local {
			fmt.Fprintf(h, "module %s@%s\n", m.Path, m.Version)
			continue
		}
		fmt.Fprintf(h, "package %s\n", p.ImportPath)
		if err := idx.addDir(p.Dir); err != nil {
			return "", nil, &BuildError{Dir: b.dir, Err: err}
		}
		files := slices.Concat(p.GoFiles, p.CgoFiles, p.EmbedFiles, p.OtherFiles, p.SFiles, p.HFiles, p.SysoFiles)
		slices.Sort(files)
		for _, f := range files {
			if err := idx.addFile(h, filepath.Join(p.Dir, f), f); err != nil {
				return "", nil, &BuildError{Dir: b.dir, Err: err}
			}
		}
		if m == nil || m.GoMod == "" || hashedMods[m.GoMod] {
			continue
		}
		hashedMods[m.GoMod] = true
		goMod := m.GoMod
		if b.tmp != "" && strings.HasPrefix(goMod, b.tmp+string(filepath.Separator)) {
			// The -modfile copy: key on the real go.mod, whose copy it is
			// (the replace it adds is keyed by the SDK's files).
			goMod = filepath.Join(m.Dir, "go.mod")
		}
		for _, f := range []string{goMod, filepath.Join(filepath.Dir(goMod), "go.sum")} {
			if err := idx.addFile(h, f, f); err != nil && !errors.Is(err, os.ErrNotExist) {
				return "", nil, &BuildError{Dir: b.dir, Err: err}
			} else if err != nil {
				idx.Files[f] = "" // must stay absent
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), idx, nil
}
