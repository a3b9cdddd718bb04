package wasmgen

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// BuildGo builds the Go package pkg (a directory, or an import path) as a
// WASI reactor, as mcphost builds Go plugins (GOOS=wasip1 GOARCH=wasm
// -buildmode=c-shared), into the file out, and returns the module.
func BuildGo(out, pkg string) ([]byte, error) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("go is not on PATH: %w", err)
	}
	cmd := exec.Command(gobin, "build", "-buildmode=c-shared", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build %s: %v\n%s", pkg, err, msg)
	}
	return os.ReadFile(out)
}

// GoGuest is a Go test guest built on first use and kept for the test
// binary, so that a run of one test builds only the guests it asks for.
type GoGuest struct {
	Pkg string // as BuildGo's pkg

	once sync.Once
	wasm []byte
	err  error
}

// Build builds the guest into dir, as <last element of Pkg>.wasm, the first
// time it is called, and returns the module, or the build's error, every
// time.
func (g *GoGuest) Build(dir string) ([]byte, error) {
	g.once.Do(func() {
		g.wasm, g.err = BuildGo(filepath.Join(dir, filepath.Base(g.Pkg)+".wasm"), g.Pkg)
	})
	return g.wasm, g.err
}
