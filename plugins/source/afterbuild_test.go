package source

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/mcphost/mcphost/internal/cachefile"
)

// TestBuildGoAfterBuild: AfterBuild runs once on a fresh build, and what
// it writes is what the cache holds and records; a cache hit does not run
// it; its error fails the build.
func TestBuildGoAfterBuild(t *testing.T) {
	needGo(t)
	ctx := context.Background()
	cache := t.TempDir()
	calls := 0
	tail := []byte("\x00\x05\x04tail") // a custom section "tail" with one byte
	after := func(_ context.Context, file string) error {
		calls++
		b, err := os.ReadFile(file)
		if err == nil {
			err = os.WriteFile(file, append(b, tail...), 0o600)
		}
		return err
	}
	out, err := BuildGo(ctx, "testdata/goodplugin", BuildOptions{CacheDir: cache, AfterBuild: after})
	if err != nil || calls != 1 {
		t.Fatalf("BuildGo: %v, %d AfterBuild calls; want 1", err, calls)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(wasm[len(wasm)-len(tail):]) != string(tail) {
		t.Errorf("the cached module lacks what AfterBuild wrote")
	}
	if err := cachefile.Check(out, cachefile.Sum(wasm)); err != nil {
		t.Errorf("the recorded SHA-256 is not the written file's: %v", err)
	}
	if again, err := BuildGo(ctx, "testdata/goodplugin", BuildOptions{CacheDir: cache, AfterBuild: after}); err != nil || again != out || calls != 1 {
		t.Errorf("cache hit: %s, %v, %d AfterBuild calls; want %s and still 1", again, err, calls, out)
	}
	boom := errors.New("boom")
	_, err = BuildGo(ctx, "testdata/goodplugin", BuildOptions{CacheDir: t.TempDir(), AfterBuild: func(context.Context, string) error { return boom }})
	var be *BuildError
	if !errors.As(err, &be) || !errors.Is(err, boom) {
		t.Errorf("failing AfterBuild: %v; want a *BuildError wrapping it", err)
	}
}
