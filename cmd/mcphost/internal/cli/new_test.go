package cli

import (
	"bytes"
	"go/format"
	"strings"
	"testing"
)

// TestGoKitGofmt checks that the Go kit's files come out of render
// gofmt-ed, whatever the plugin name's length, since render does not
// format them.
func TestGoKitGofmt(t *testing.T) {
	var goKit kit
	for _, k := range kits {
		if k.lang == "go" {
			goKit = k
		}
	}
	if goKit.dir == "" {
		t.Fatal("no go kit in kits")
	}
	for _, name := range []string{"a", "word-count", "A" + strings.Repeat("b_", 15) + "c"} {
		files, err := render(goKit, scaffold{Name: name, Module: "example.com/" + strings.ToLower(name), Scheme: uriScheme(name), Dir: "/tmp/" + name, SDKDir: "mcphost-sdk"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n := 0
		for _, f := range files {
			if !strings.HasSuffix(f.name, ".go") {
				continue
			}
			n++
			got, err := format.Source(f.data)
			if err != nil {
				t.Errorf("%s: %s: %v", name, f.name, err)
			} else if !bytes.Equal(got, f.data) {
				t.Errorf("%s: %s is not gofmt-ed; gofmt the template (and keep substitutions inside strings and comments):\n%s", name, f.name, got)
			}
		}
		if n == 0 {
			t.Fatalf("%s: render wrote no .go file", name)
		}
	}
}
