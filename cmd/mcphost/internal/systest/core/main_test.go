package core

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestScripts drives the real mcphost binary (built without -race, so Wasm
// compiles at full speed) through testdata/script/*.txtar.
func TestScripts(t *testing.T) {
	bin := systest.Binary(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(e *testscript.Env) error {
			e.Setenv("REPO", root)
			e.Setenv("MCPHOST", bin) // for env -i, which drops PATH
			if goCmd, err := exec.LookPath("go"); err == nil {
				e.Setenv("GOCMD", goCmd)
			}
			e.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
			// Share the caches (Go builds, wazero compilations) with the
			// rest of the test run so scripts stay fast.
			if dir, err := os.UserCacheDir(); err == nil {
				e.Setenv("XDG_CACHE_HOME", dir)
			}
			for _, k := range []string{"GOCACHE", "GOMODCACHE", "GOPATH", "GOFLAGS", "GOPROXY", "GONOSUMDB", "GOTOOLCHAIN", "GOROOT"} {
				if v, err := systest.GoEnv(k); err == nil && v != "" {
					e.Setenv(k, v)
				}
			}
			return nil
		},
	})
}
