package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/plugins/internal/opfile"
)

// TestOperatorFilesBounded: policy files and secrets_file are read with
// the one reader of operator files: a sparse file far over the limit is
// refused before it is read, naming the file and the limit, and a link
// out of the file's directory is refused, naming the file.
func TestOperatorFilesBounded(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "elsewhere")
	if err := os.WriteFile(outside, []byte("TOKEN=hunter2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	read := map[string]func(string) error{
		"policy":  func(f string) error { _, err := ReadPolicy(f); return err },
		"secrets": func(f string) error { _, err := readSecretsFile(f); return err },
	}
	tests := []struct {
		kind, name string
		make       func(t *testing.T, file string)
		want       string
		limit      bool
	}{
		{"policy", "sparse", func(t *testing.T, f string) { sparseFile(t, f, 1<<30) }, "is 1073741824 bytes, more than the limit of 1 MiB", true},
		{"policy", "one over", func(t *testing.T, f string) { sparseFile(t, f, opfile.MaxPolicy+1) }, "is 1048577 bytes, more than the limit of 1 MiB", true},
		{"policy", "linked out", func(t *testing.T, f string) { link(t, outside, f) }, "leads outside", false},
		{"secrets", "sparse", func(t *testing.T, f string) { sparseFile(t, f, 1<<30) }, "is 1073741824 bytes, more than the limit of 1 MiB", true},
		{"secrets", "linked out", func(t *testing.T, f string) { link(t, outside, f) }, "leads outside", false},
	}
	for _, tt := range tests {
		t.Run(tt.kind+"/"+tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), tt.kind)
			tt.make(t, file)
			err := read[tt.kind](file)
			if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v; want an error naming %s and saying %q", err, file, tt.want)
			}
			if le := (*opfile.LimitError)(nil); errors.As(err, &le) != tt.limit {
				t.Errorf("got %v; want a LimitError: %v", err, tt.limit)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("got %q: the outside file's content", err)
			}
		})
	}
}

// sparseFile makes file size bytes long, holding nothing (mode 0600, as
// a secrets file must be).
func sparseFile(t *testing.T, file string, size int64) {
	t.Helper()
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(file, size); err != nil {
		t.Fatal(err)
	}
}

func link(t *testing.T, target, file string) {
	t.Helper()
	if err := os.Symlink(target, file); err != nil {
		t.Fatal(err)
	}
}
