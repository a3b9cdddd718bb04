package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLinksNoExtismSDK keeps the Extism Go SDK (and what it brings:
// observe-sdk, OTLP) out of the binary: the sandbox runs the native
// kernel, and go-sdk is only the test oracle of sandbox/differential_test.go.
func TestBinaryLinksNoExtismSDK(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go is not on PATH: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.Contains(pkg, "extism") || strings.HasPrefix(pkg, "github.com/dylibso/") {
			t.Errorf("cmd/mcphost links %s; the Extism SDK belongs in tests only", pkg)
		}
	}
}
