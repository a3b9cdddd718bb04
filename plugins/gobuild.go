package plugins

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// buildRecipe changes whenever the way BuildGo builds changes, so that
// older cache entries are not reused.
const buildRecipe = "mcphost-gobuild-1: go build -buildmode=c-shared (GOOS=wasip1 GOARCH=wasm)"

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

// BuildGo builds the Go main package in dir as a Wasm reactor
// (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared) and returns the
// path of the .wasm file in cacheDir ("" means
// os.UserCacheDir()/mcphost/build). The rest of the environment (GOFLAGS,
// GOCACHE, GOPATH, GOPROXY, …) is inherited; the go command is the one on
// PATH.
//
// Builds are cached by content. The key is a SHA-256 over the go
// command's version and its GOFLAGS, GOEXPERIMENT and GOWORK, and over
// every package the plugin imports (go list -deps, evaluated for wasip1):
// for packages of the main module (or of a workspace, or a module replaced
// by a local directory) the contents of their source, embedded and other
// files and of their module's go.mod and go.sum; for other modules their
// path and version, whose content the module cache keeps immutable. Only
// the packages actually imported count, so editing an unrelated package of
// a large module does not rebuild the plugin. A cache hit runs no
// compiler. The output is written to a temporary file and renamed into
// place, so concurrent builds and crashes never leave a partial file.
func BuildGo(ctx context.Context, dir, cacheDir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", &BuildError{Dir: dir, Err: err}
	}
	dir = abs
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
	key, err := sourceKey(ctx, dir)
	if err != nil {
		return "", err
	}
	out := filepath.Join(cacheDir, key+".wasm")
	if fi, err := os.Stat(out); err == nil && fi.Mode().IsRegular() {
		return out, nil
	}
	tmp, err := os.MkdirTemp(cacheDir, ".build-")
	if err != nil {
		return "", &BuildError{Dir: dir, Err: err}
	}
	defer os.RemoveAll(tmp)
	built := filepath.Join(tmp, "plugin.wasm")
	if _, err := goCommand(ctx, dir, "build", "-buildmode=c-shared", "-o", built, "."); err != nil {
		return "", err
	}
	if err := os.Rename(built, out); err != nil {
		return "", &BuildError{Dir: dir, Err: err}
	}
	return out, nil
}

// goCommand runs the go command in dir for wasip1/wasm and returns its
// standard output; a failure is a *BuildError holding what it printed.
func goCommand(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, &BuildError{Dir: dir, Output: stderr.String(), Err: fmt.Errorf("go %s: %w", args[0], err)}
	}
	return stdout.Bytes(), nil
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

// sourceKey computes BuildGo's cache key for the package in dir.
func sourceKey(ctx context.Context, dir string) (string, error) {
	h := sha256.New()
	fmt.Fprintln(h, buildRecipe)
	env, err := goCommand(ctx, dir, "env", "GOVERSION", "GOFLAGS", "GOEXPERIMENT", "GOWORK")
	if err != nil {
		return "", err
	}
	h.Write(env)
	list, err := goCommand(ctx, dir, "list", "-e", "-deps",
		"-json=ImportPath,Dir,Standard,Module,GoFiles,CgoFiles,EmbedFiles,OtherFiles,SFiles,HFiles,SysoFiles", ".")
	if err != nil {
		return "", err
	}
	hashedMods := map[string]bool{}
	d := json.NewDecoder(bytes.NewReader(list))
	for {
		var p listedPackage
		if err := d.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return "", &BuildError{Dir: dir, Err: fmt.Errorf("read go list output: %w", err)}
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
		files := slices.Concat(p.GoFiles, p.CgoFiles, p.EmbedFiles, p.OtherFiles, p.SFiles, p.HFiles, p.SysoFiles)
		slices.Sort(files)
		for _, f := range files {
			if err := hashFile(h, filepath.Join(p.Dir, f), f); err != nil {
				return "", &BuildError{Dir: dir, Err: err}
			}
		}
		if m != nil && m.GoMod != "" && !hashedMods[m.GoMod] {
			hashedMods[m.GoMod] = true
			for _, f := range []string{m.GoMod, filepath.Join(filepath.Dir(m.GoMod), "go.sum")} {
				if err := hashFile(h, f, f); err != nil && !errors.Is(err, os.ErrNotExist) {
					return "", &BuildError{Dir: dir, Err: err}
				}
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func hashFile(h io.Writer, file, name string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	fh := sha256.New()
	if _, err := io.Copy(fh, f); err != nil {
		return err
	}
	fmt.Fprintf(h, "file %s %x\n", name, fh.Sum(nil))
	return nil
}
