package systest

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Main runs the tests of a system-test package in cmd/mcphost, the
// command's folder, so that the paths they name (testdata/...,
// ../../examples/...) and the build of the binary (go build .) resolve
// there. A package's TestMain calls it: os.Exit(systest.Main(m)).
// The directories TempDir made are removed when the tests end.
func Main(m *testing.M) int {
	defer removeTempDirs()
	dir, err := commandDir()
	if err == nil {
		err = os.Chdir(dir)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "systest: %v\n", err)
		return 1
	}
	return m.Run()
}

var tempDirs struct {
	sync.Mutex
	paths []string
}

// TempDir makes a directory, named like os.MkdirTemp's with prefix, that
// outlives one test (a binary built once per test binary) and is removed
// when Main returns. A test's own files belong in t.TempDir.
func TempDir(prefix string) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	tempDirs.Lock()
	tempDirs.paths = append(tempDirs.paths, dir)
	tempDirs.Unlock()
	return dir, nil
}

func removeTempDirs() {
	tempDirs.Lock()
	defer tempDirs.Unlock()
	for _, dir := range tempDirs.paths {
		if err := os.RemoveAll(dir); err != nil {
			fmt.Fprintf(os.Stderr, "systest: %v\n", err)
		}
	}
	tempDirs.paths = nil
}

// commandDir finds cmd/mcphost from the working directory: the module
// root is the nearest folder above with a go.mod.
func commandDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "cmd", "mcphost"), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod in %s or above", wd)
		}
	}
}
