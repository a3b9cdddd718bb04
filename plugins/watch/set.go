package watch

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// watchSet decides, for a set of target paths (plugins.toml, .wasm files,
// Go-source directories, the plugin_dir, the watch globs of built plugins),
// which directories to watch and which events matter. It never asks
// whether a target is a file or a directory: a target that does not exist
// yet may become either. A target whose last element holds *, ? or [ is a
// glob (filepath.Match): the directory above it is watched, and the
// files in it that match, hidden ones aside, are relevant.
type watchSet struct {
	targets []string // absolute, clean, sorted, unique
}

func newWatchSet(paths []string) watchSet {
	var ts []string
	for _, p := range paths {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			ts = append(ts, abs) // Abs cleans
		}
	}
	slices.Sort(ts)
	return watchSet{targets: slices.Compact(ts)}
}

// relevant reports whether a change to path p concerns a target: p is a
// target (a file saved, a directory created or removed), an ancestor of one
// (a directory on the way created, removed or renamed), or a source file
// directly inside a target directory (see sourceFile).
func (s watchSet) relevant(p string) bool {
	dir := filepath.Dir(p)
	for _, t := range s.targets {
		if p == t || dir == t && sourceFile(filepath.Base(p)) || within(t, p) {
			return true
		}
		if isGlob(t) && dir == filepath.Dir(t) && !strings.HasPrefix(filepath.Base(p), ".") {
			if ok, _ := filepath.Match(t, p); ok {
				return true
			}
		}
	}
	return false
}

// sourceFile reports whether a file in a watched directory is one a reload
// reads: Go sources, go.mod and go.sum of a Go-source plugin, and the
// *.wasm files of the drop-in directory. Hidden files (editors' swap and
// lock files, the go command ignores them too) and backups ("main.go~")
// are not.
func sourceFile(name string) bool {
	if strings.HasPrefix(name, ".") {
		return false
	}
	return strings.HasSuffix(name, ".go") || strings.HasSuffix(name, ".wasm") || name == "go.mod" || name == "go.sum"
}

// isGlob reports whether a target's last element is a pattern.
func isGlob(t string) bool { return strings.ContainsAny(filepath.Base(t), "*?[") }

// within reports whether p lies strictly below dir.
func within(p, dir string) bool {
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return len(p) > len(dir) && strings.HasPrefix(p, dir)
}

// dirs returns the directories to watch now, sorted: the parent of every
// target (editors replace a file by renaming another over it, which only
// the directory sees), or its nearest existing ancestor while it does not
// exist, and every target that is an existing directory.
func (s watchSet) dirs() []string {
	var out []string
	for _, t := range s.targets {
		if isDir(t) {
			out = append(out, t)
		}
		if d := existingAncestor(filepath.Dir(t)); d != "" {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// existingAncestor returns dir, or its nearest ancestor that exists as a
// directory ("" when none does).
func existingAncestor(dir string) string {
	for {
		if isDir(dir) {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			return ""
		}
		dir = up
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
