package systest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Main runs the tests of a system-test package in cmd/mcphost, the
// command's folder, so that the paths they name (testdata/...,
// ../../examples/...) and the build of the binary (go build .) resolve
// there. A package's TestMain calls it: os.Exit(systest.Main(m)).
func Main(m *testing.M) int {
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
