package sandbox

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	needGuest(t)
	missing := filepath.Join(t.TempDir(), "missing")
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		wasm   []byte
		lim    Limits
		stage  string
		detail string
	}{
		{"pages over 65536", guestWasm, Limits{MemoryPages: 65537}, "limits", "over the maximum of 65536"},
		{"pages below the kernel's minimum", guestWasm, Limits{MemoryPages: 8}, "limits", "below the Extism kernel's minimum"},
		{"pages below the module's minimum", guestWasm, Limits{MemoryPages: 20}, "limits", "over limit of 20 pages"},
		{"negative timeout", guestWasm, Limits{Timeout: -time.Second}, "limits", "negative"},
		{"negative instances", guestWasm, Limits{Instances: -1}, "limits", "negative"},
		{"input over memory", guestWasm, Limits{MemoryPages: 64, MaxInputBytes: 3 << 20}, "limits", "over half the memory limit"},
		{"bad host pattern", guestWasm, Limits{AllowedHosts: []string{"[a-"}}, "limits", "allowed hosts"},
		{"missing mount", guestWasm, Limits{AllowedPaths: []Mount{{Host: missing}}}, "limits", "no such file"},
		{"missing mount granted by a policy", guestWasm, Limits{AllowedPaths: []Mount{{Host: missing, From: "/p/policy.yaml:7"}}}, "limits", "allowed paths (/p/policy.yaml:7): stat " + missing + ": no such file"},
		{"mount of a file", guestWasm, Limits{AllowedPaths: []Mount{{Host: file}}}, "limits", "not a directory"},
		{"bad env", guestWasm, Limits{Env: map[string]string{"A=B": "x"}}, "limits", "env"},
		{"not wasm", []byte("hello"), Limits{}, "compile", ""},
		{"host function signature mismatch", buildGuest(t, badImportGuest), Limits{}, "instantiate", "list_roots"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := testEngine.Load(context.Background(), "bad", tc.wasm, tc.lim)
			if err == nil {
				m.Close(context.Background())
				t.Fatal("Load succeeded; want an error")
			}
			var le *LoadError
			if !errors.As(err, &le) {
				t.Fatalf("got %v (%T); want *LoadError", err, err)
			}
			if le.Stage != tc.stage || le.Module != "bad" || !strings.Contains(err.Error(), tc.detail) {
				t.Errorf("got stage %q: %v; want stage %q containing %q", le.Stage, err, tc.stage, tc.detail)
			}
		})
	}
}

func TestLimitsDefaults(t *testing.T) {
	t.Parallel()
	m := load(t, Limits{})
	got := m.Limits()
	if got.MemoryPages != DefaultMemoryPages || got.Timeout != DefaultTimeout || got.Instances < 1 ||
		got.MaxInputBytes != DefaultMaxInputBytes || got.MaxOutputBytes != DefaultMaxOutputBytes {
		t.Errorf("defaults: got %+v", got)
	}
}

func TestCompilationCacheOnDisk(t *testing.T) {
	t.Parallel()
	load(t, Limits{Instances: 1})
	files := 0
	err := filepath.WalkDir(testEngine.CacheDir(), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			files++
		}
		return err
	})
	if err != nil || files == 0 {
		t.Errorf("cache dir %s: got %d files, %v; want compiled code", testEngine.CacheDir(), files, err)
	}
}

func TestCacheDirPermissions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := NewEngine(context.Background(), EngineOptions{CacheDir: dir}); err == nil || !strings.Contains(err.Error(), "writable by group or others") {
		t.Errorf("world-writable cache dir: got %v; want an error", err)
	}
}

func TestAllowedPaths(t *testing.T) {
	t.Parallel()
	rw, ro := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ro, "ro.txt"), []byte("read me"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := load(t, Limits{Instances: 1, AllowedPaths: []Mount{
		{Host: rw, Guest: "/data"},
		{Host: ro, Guest: "/ro", ReadOnly: true},
	}})
	tests := []struct {
		name, export, path string
		want               string // output, or "" for a guest error
		wantOnHost         string // a file that must exist afterwards ("" for none)
		notOnHost          string
	}{
		{"read read-only mount", "read", "/ro/ro.txt", "read me", "", ""},
		{"write read-only mount", "write", "/ro/new.txt", "", "", filepath.Join(ro, "new.txt")},
		{"overwrite in read-only mount", "write", "/ro/ro.txt", "", "", ""},
		{"write read-write mount", "write", "/data/new.txt", "ok", filepath.Join(rw, "new.txt"), ""},
		{"read outside the mounts", "read", "/etc/passwd", "", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := m.Call(context.Background(), tc.export, []byte(tc.path))
			if tc.want == "" {
				if ce := callErr(t, err); ce.Kind != KindGuestError {
					t.Errorf("got %v; want a guest error", err)
				}
			} else if err != nil || string(out) != tc.want {
				t.Errorf("got %q, %v; want %q", out, err, tc.want)
			}
			if tc.wantOnHost != "" {
				if _, err := os.Stat(tc.wantOnHost); err != nil {
					t.Errorf("host file: %v", err)
				}
			}
			if tc.notOnHost != "" {
				if _, err := os.Stat(tc.notOnHost); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("host file %s: got %v; want it absent", tc.notOnHost, err)
				}
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(ro, "ro.txt")); err != nil || string(b) != "read me" {
		t.Errorf("read-only file afterwards: got %q, %v", b, err)
	}
}
