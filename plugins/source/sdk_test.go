package source

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/mcphost/mcphost"
)

func TestExtractSDK(t *testing.T) {
	parent := t.TempDir()
	dir, err := extractSDK(parent)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"go.mod", "abi/abi.go", "sdk-guest/guest.go", "sdk-guest/guesttest/guesttest.go", "sdk-guest/stateless/doc.go"} {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		if want := mcphost.SDKFiles()[name]; !bytes.Equal(got, want) {
			t.Errorf("%s: extracted content differs from the embedded file", name)
		}
	}
	for name := range mcphost.SDKFiles() {
		if filepath.Ext(name) == ".go" && bytes.HasSuffix([]byte(name), []byte("_test.go")) {
			t.Errorf("%s: test files are not part of the SDK", name)
		}
	}
	again, err := extractSDK(parent)
	if err != nil || again != dir {
		t.Errorf("second extractSDK = %q, %v; want %q, nil", again, err, dir)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 1 {
		t.Errorf("parent holds %d entries; want 1 (no temporary left behind)", len(ents))
	}
}

// TestExtractSDKRepairs: a copy that lost files (its go.mod among them) to
// something outside mcphost is replaced, not trusted and not fatal.
func TestExtractSDKRepairs(t *testing.T) {
	parent := t.TempDir()
	dir, err := extractSDK(parent)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatal(err)
	}
	again, err := extractSDK(parent)
	if err != nil || again != dir {
		t.Fatalf("extractSDK after damage = %q, %v; want %q, nil", again, err, dir)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "go.mod")); err != nil || !bytes.Equal(got, mcphost.SDKFiles()["go.mod"]) {
		t.Errorf("go.mod after repair: %q, %v; want the embedded one", got, err)
	}
}

// TestExtractedSDKBuilds: the extracted module is complete on its own: every
// package in it builds for wasip1 with no requirements and no network.
func TestExtractedSDKBuilds(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	dir, err := extractSDK(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goCmd, "build", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./... in the extracted SDK: %v\n%s", err, out)
	}
}
