package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcphost/mcphost/internal/logtest"
	"github.com/mcphost/mcphost/internal/wasmgen"
)

// mountTmpfs mounts a tmpfs of size bytes on a new directory, unmounted
// after t; it skips t unless the test runs as root (CI does).
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root (CI runs as root); run as root to test a real full or read-only disk")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Skipf("mount tmpfs on %s: %v (a container without CAP_SYS_ADMIN?)", dir, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fill writes to a file in dir until the file system is full.
func fill(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "filler"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill %s: %v; want ENOSPC", dir, err)
			}
			return
		}
	}
}

// TestCompileCacheUnwritable: a compile cache on a full or read-only file
// system never stops a module from loading: it compiles in memory, and
// says so once, naming the directory.
func TestCompileCacheUnwritable(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cache func(t *testing.T) string
	}{
		{"full file system", func(t *testing.T) string {
			mnt := mountTmpfs(t, "256k")
			dir := filepath.Join(mnt, "wazero")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			fill(t, mnt)
			return dir
		}},
		{"read-only file system", func(t *testing.T) string {
			mnt := mountTmpfs(t, "1m")
			dir := filepath.Join(mnt, "wazero")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mount("", mnt, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
				t.Fatalf("remount %s read-only: %v", mnt, err)
			}
			return dir
		}},
		{"directory that cannot be made", func(t *testing.T) string {
			mnt := mountTmpfs(t, "1m")
			if err := syscall.Mount("", mnt, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
				t.Fatalf("remount %s read-only: %v", mnt, err)
			}
			return filepath.Join(mnt, "wazero")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			dir := tt.cache(t)
			log, rec := logtest.New()
			e, err := NewEngine(ctx, EngineOptions{CacheDir: dir, Logger: log})
			if err != nil {
				t.Fatalf("NewEngine: %v; want an engine that compiles in memory", err)
			}
			defer e.Close(ctx)
			for _, out := range []string{"one", "two"} {
				m, err := e.Load(ctx, out, wasmgen.Module(wasmgen.Func{Name: "hello", Output: out}), Limits{Instances: 1})
				if err != nil {
					t.Fatalf("Load %s: %v; want it compiled in memory", out, err)
				}
				defer m.Close(ctx)
				if got, err := m.Call(ctx, "hello", nil); err != nil || string(got) != out {
					t.Errorf("call %s: %q, %v", out, got, err)
				}
			}
			warns := rec.Matching("WARN")
			if len(warns) != 1 || !strings.HasPrefix(warns[0], "WARN compile cache cannot be written: compiling in memory") || !strings.Contains(warns[0], dir) {
				t.Errorf("warnings %q; want one saying the cache at %s is not written", warns, dir)
			}
		})
	}
}
