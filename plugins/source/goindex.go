package source

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcphost/mcphost"
	"github.com/mcphost/mcphost/internal/cachefile"
)

// buildIndex is what BuildGo needs to find a cached build without the go
// command: every local file that went in (absolute path → SHA-256 hex, ""
// for a file that must stay absent), every local package directory
// (absolute path → hash of its sorted entry names), the Go version, and
// the module built.
type buildIndex struct {
	GoVersion string
	Env       map[string]string // goEnvVars as they were (see buildEnv)
	Files     map[string]string
	Dirs      map[string]string
	Wasm      string // file name in the cache directory
}

// addFile records file in the index and, when h is not nil, writes
// "file <name> <hash>" to h.
func (x *buildIndex) addFile(h io.Writer, file, name string) error {
	sum, err := cachefile.SumOf(file)
	if err != nil {
		return err
	}
	x.Files[file] = sum
	if h != nil {
		fmt.Fprintf(h, "file %s %s\n", name, sum)
	}
	return nil
}

func (x *buildIndex) addDir(dir string) error {
	sum, err := dirNames(dir)
	if err != nil {
		return err
	}
	x.Dirs[dir] = sum
	return nil
}

// dirNames hashes the sorted names in dir, so that a file added to a
// package directory (which may join the build) invalidates the index.
func dirNames(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	for _, e := range ents { // ReadDir sorts by name
		fmt.Fprintln(h, e.Name())
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (x *buildIndex) write(file string) {
	data, err := json.Marshal(x)
	if err != nil {
		return
	}
	tmp := fmt.Sprintf("%s.%d.tmp", file, os.Getpid())
	if os.WriteFile(tmp, data, 0o600) != nil {
		return
	}
	if os.Rename(tmp, file) != nil {
		os.Remove(tmp)
	}
}

// Cache lookups without the go command.
const (
	indexMiss    = iota // no usable entry: build
	indexHit            // the entry matches: serve it
	indexEnvOnly        // sources match, the go environment differs
)

// cachedBuild looks up the index entry in idxFile and returns the module
// it names with indexHit when every recorded file and directory is
// unchanged, the go environment variables are the same and the Go version
// has not changed; with indexEnvOnly when only the environment differs. It
// never runs the go command: the version is read from the VERSION file of
// the go command a build would use, and when none is found the recorded
// build is trusted.
func cachedBuild(idxFile, cacheDir, goCmd string) (string, int) {
	data, err := os.ReadFile(idxFile)
	if err != nil {
		return "", indexMiss
	}
	var x buildIndex
	if json.Unmarshal(data, &x) != nil || x.Wasm == "" || x.Wasm != filepath.Base(x.Wasm) || len(x.Files) == 0 {
		return "", indexMiss
	}
	out := filepath.Join(cacheDir, x.Wasm)
	if fi, err := os.Stat(out); err != nil || !fi.Mode().IsRegular() {
		return "", indexMiss
	}
	for f, want := range x.Files {
		got, err := cachefile.SumOf(f)
		if want == "" {
			if !os.IsNotExist(err) {
				return "", indexMiss
			}
			continue
		}
		if err != nil || got != want {
			return "", indexMiss
		}
	}
	for d, want := range x.Dirs {
		if got, err := dirNames(d); err != nil || got != want {
			return "", indexMiss
		}
	}
	if goCmd == "" {
		goCmd, _ = FindGo()
	}
	if v := goVersionFile(goCmd); v != "" && v != x.GoVersion {
		return "", indexMiss
	}
	if !maps.Equal(x.Env, buildEnv()) {
		return out, indexEnvOnly
	}
	return out, indexHit
}

// goEnvVars are the go environment settings that change what a build
// produces, besides the sources and the Go version. GOTOOLCHAIN is left
// out: the Go version it selects is recorded and compared instead.
// CGO_ENABLED does not apply to wasip1.
var goEnvVars = [...]string{"GOFLAGS", "GOEXPERIMENT", "GOWORK"}

// buildEnv returns goEnvVars as the go command would see them: from the
// environment, else from the go env file (go env -w), without running go.
func buildEnv() map[string]string {
	file := os.Getenv("GOENV")
	if file == "" {
		if dir, err := os.UserConfigDir(); err == nil {
			file = filepath.Join(dir, "go", "env")
		}
	}
	fromFile := map[string]string{}
	if file == "off" {
		file = ""
	}
	if data, err := os.ReadFile(file); file != "" && err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
				fromFile[k] = v
			}
		}
	}
	env := map[string]string{}
	for _, k := range goEnvVars {
		v, ok := os.LookupEnv(k)
		if !ok {
			v = fromFile[k]
		}
		if v != "" {
			env[k] = v
		}
	}
	return env
}

// goVersionFile reads the version ("go1.26.8") from the VERSION file of
// the Go installation that goCmd belongs to, or returns "".
func goVersionFile(goCmd string) string {
	if goCmd == "" {
		return ""
	}
	if real, err := filepath.EvalSymlinks(goCmd); err == nil {
		goCmd = real
	}
	data, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(goCmd)), "VERSION"))
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(data), "\n")
	return strings.TrimSpace(line)
}

// indexKey names the index entry of a plugin directory: the directory,
// the recipe and the embedded SDK. The go environment is recorded in the
// entry instead, so that a client that starts mcphost without it (and
// without go) still finds the build.
func indexKey(dir string, mod *moduleInfo) string {
	h := sha256.New()
	fmt.Fprintln(h, buildRecipe)
	fmt.Fprintln(h, dir)
	if mod.embedSDK {
		fmt.Fprintln(h, "sdk", mcphost.SDKHash())
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// moduleInfo is what BuildGo reads from a plugin's go.mod without the go
// command.
type moduleInfo struct {
	root     string // the directory holding go.mod ("" when there is none)
	goMod    []byte
	embedSDK bool // requires the SDK's module and does not replace it
	// sdkCopy is the directory of the SDK copy that go.mod replaces the
	// SDK's module with, when mcphost owns it ([SDKCopyDir]); "" otherwise.
	sdkCopy string
}

// readModule finds the go.mod that governs dir and decides whether the
// build needs the embedded SDK.
func readModule(dir string) (*moduleInfo, error) {
	for d := dir; ; {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			m := &moduleInfo{root: d, goMod: data}
			path, requires, replaces := scanGoMod(data)
			target, replaced := replaces[mcphost.ModulePath]
			m.embedSDK = path != mcphost.ModulePath && requires[mcphost.ModulePath] && !replaced
			m.sdkCopy = sdkCopyOf(d, target)
			return m, nil
		}
		if !os.IsNotExist(err) {
			return nil, err
		}
		parent := filepath.Dir(d)
		if parent == d {
			return &moduleInfo{}, nil
		}
		d = parent
	}
}

// sdkCopyOf returns the directory a replace target names, when mcphost owns
// it: it holds the stamp, or it is the conventional [SDKCopyDir] and
// missing (a clone of a plugin that ignores it).
func sdkCopyOf(root, target string) string {
	if target == "" || !filepath.IsLocal(filepath.FromSlash(target)) && !filepath.IsAbs(target) {
		return ""
	}
	dir := filepath.Join(root, filepath.FromSlash(target))
	if _, err := os.Stat(filepath.Join(dir, sdkCopyStamp)); err == nil {
		return dir
	}
	if _, err := os.Stat(dir); os.IsNotExist(err) && path.Clean(target) == SDKCopyDir {
		return dir
	}
	return ""
}

// scanGoMod reads the module path, the required module paths and the
// replaced ones (with their replacement: a directory, or "" for a module
// version) of a go.mod. It is not a full parser: it understands the
// directives, blocks and comments that go mod tidy writes, which is all
// BuildGo needs to decide about the SDK; the go command reports anything
// malformed.
func scanGoMod(data []byte) (module string, requires map[string]bool, replaces map[string]string) {
	requires, replaces = map[string]bool{}, map[string]string{}
	block := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "//")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if block != "" {
			if f[0] == ")" {
				block = ""
				continue
			}
			f = slices.Insert(f, 0, block)
		} else if len(f) == 2 && f[1] == "(" {
			block = f[0]
			continue
		}
		if len(f) < 2 {
			continue
		}
		p := strings.Trim(f[1], `"`)
		switch f[0] {
		case "module":
			module = p
		case "require":
			requires[p] = true
		case "replace":
			// replace OLD [V] => DIR, or => NEW V (a module: no directory).
			dir := ""
			if i := slices.Index(f, "=>"); i >= 0 && i == len(f)-2 {
				dir = strings.Trim(f[i+1], `"`)
			}
			replaces[p] = dir
		}
	}
	return module, requires, replaces
}

// sdkDirName is the directory of the Go build cache that holds the SDK
// extracted from the binary; cache pruning leaves it alone.
const sdkDirName = "sdk"

// sdkModfile writes, into tmp, the go.mod (and go.sum) that the go command
// gets with -modfile: the plugin's own, plus a replace of the SDK's module
// by the SDK this binary carries, extracted into the cache.
func sdkModfile(cacheDir string, mod *moduleInfo, tmp string) (string, error) {
	sdk, err := extractSDK(filepath.Join(cacheDir, sdkDirName))
	if err != nil {
		return "", err
	}
	gm := slices.Clone(mod.goMod)
	gm = fmt.Appendf(gm, "\nreplace %s => %s\n", mcphost.ModulePath, quoteModPath(sdk))
	file := filepath.Join(tmp, "go.mod")
	if err := os.WriteFile(file, gm, 0o600); err != nil {
		return "", err
	}
	if sum, err := os.ReadFile(filepath.Join(mod.root, "go.sum")); err == nil {
		if err := os.WriteFile(filepath.Join(tmp, "go.sum"), sum, 0o600); err != nil {
			return "", err
		}
	}
	return file, nil
}

// quoteModPath quotes a directory for go.mod when it needs it.
func quoteModPath(p string) string {
	if strings.ContainsAny(p, " \t\"'`()") {
		b, _ := json.Marshal(p)
		return string(b)
	}
	return p
}

// SDKModfile prepares what a go command run in dir needs to use the SDK
// this binary carries, the way [BuildGo] does: when the module that
// governs dir requires github.com/mcphost/mcphost without replacing it,
// it returns a go.mod (beside a go.sum) to pass with -modfile (or
// GOFLAGS=-modfile=…), written to a temporary directory that cleanup
// removes. Otherwise it returns "". cacheDir is where the SDK is
// extracted, as in [BuildOptions]. The plugin's own files are not touched,
// but for the SDK copy its go.mod replaces the module with ([SDKCopyDir]),
// which is rewritten when it is not this binary's SDK.
func SDKModfile(dir, cacheDir string) (modfile string, cleanup func(), err error) {
	cleanup = func() {}
	mod, err := readModule(dir)
	if err != nil {
		return "", cleanup, err
	}
	if _, err := refreshSDKCopy(mod); err != nil || !mod.embedSDK {
		return "", cleanup, err
	}
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		return "", cleanup, err
	}
	tmp, err := os.MkdirTemp(cacheDir, ".modfile-")
	if err != nil {
		return "", cleanup, err
	}
	cleanup = func() { os.RemoveAll(tmp) }
	if h, err := lease(tmp); err == nil { // kept from RemoveLeftovers until cleanup
		cleanup = func() {
			h.Close()
			os.RemoveAll(tmp)
		}
	}
	file, err := sdkModfile(cacheDir, mod, tmp)
	if err != nil {
		cleanup()
		return "", func() {}, err
	}
	return file, cleanup, nil
}
