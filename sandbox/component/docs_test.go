package component

import "testing"

// TestPackageDocs reads descriptions from a package-docs section as
// wit-parser writes it (a version byte, then JSON): world functions under
// "funcs" or "func_exports", interface functions under "interfaces", and
// FunctionMetadata as a plain string or {"docs": …}.
func TestPackageDocs(t *testing.T) {
	section := append([]byte{1}, `{"package":"mcphost:kinds","worlds":{"kinds":{"docs":"w",
		"func_exports":{"greet":{"docs":"Greets a person by name.","stability":{"stable":{"since":"1.0.0"}}}},
		"funcs":{"add":"Adds integers."}}},
		"interfaces":{"shapes":{"funcs":{"echo-point":{"docs":"Returns the point moved."}}}}}`...)
	d := parseDocs(section)
	for _, tt := range []struct {
		f    Func
		want string
	}{
		{Func{Name: "greet"}, "Greets a person by name."},
		{Func{Name: "add"}, "Adds integers."},
		{Func{Name: "echo-point", Interface: "mcphost:kinds/shapes@0.1.0"}, "Returns the point moved."},
		{Func{Name: "missing"}, ""},
	} {
		if got := d.lookup(&tt.f); got != tt.want {
			t.Errorf("%s %s: %q, want %q", tt.f.Interface, tt.f.Name, got, tt.want)
		}
	}
	if got := parseDocs([]byte{9, '{'}).lookup(&Func{Name: "greet"}); got != "" {
		t.Errorf("an unknown section version gave %q", got)
	}
}
