package systest

import (
	"os"
	"testing"
)

// RequireTool skips the test when a kit's toolchain is missing, except in
// CI (CI=true), where scripts/kits.sh installs it and absence is a failure.
func RequireTool(t *testing.T, why string, ok bool) {
	t.Helper()
	if ok {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true: scripts/kits.sh should have installed it)", why)
	}
	t.Skipf("skipping: %s; run scripts/kits.sh to install the kit toolchains", why)
}
