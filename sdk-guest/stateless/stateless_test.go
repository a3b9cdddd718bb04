package stateless

import (
	"os"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// TestExportName: the export is the one mcphost looks for.
func TestExportName(t *testing.T) {
	src, err := os.ReadFile("export_wasip1.go")
	if err != nil {
		t.Fatal(err)
	}
	if want := "//go:wasmexport " + abi.ExportStateless + "\n"; !strings.Contains(string(src), want) {
		t.Errorf("export_wasip1.go does not contain %q", want)
	}
}
