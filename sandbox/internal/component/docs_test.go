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

// TestToolDescriptions: a tool's description is its WIT doc comment, or,
// without one, its WIT signature.
func TestToolDescriptions(t *testing.T) {
	u32 := prims[0x79]
	str := prims[0x73]
	opt := &Type{Kind: Option, Elem: str}
	opt.layout = computeLayout(opt)
	res := &Type{Kind: Result, Ok: u32, Err: str}
	res.layout = computeLayout(res)
	section := append([]byte{1}, `{"worlds":{"w":{"funcs":{"greet":"Greets a person by name."}}}}`...)
	cp := &Compiled{c: &Component{docs: section}, funcs: []*Func{
		{Name: "add", Type: &FuncType{Params: []Field{{"a", u32}, {"b", u32}}, Result: u32}},
		{Name: "greet", Type: &FuncType{Params: []Field{{"name", str}}, Result: str}},
		{Name: "nothing", Type: &FuncType{}},
		{Name: "parse", Type: &FuncType{Params: []Field{{"s", opt}}, Result: res}},
	}}
	tools, _, err := cp.Tools()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"add":     "add(a: u32, b: u32) -> u32",
		"greet":   "Greets a person by name.",
		"nothing": "nothing()",
		"parse":   "parse(s: option<string>) -> result<u32, string>",
	}
	if len(tools) != len(want) {
		t.Fatalf("%d tools, want %d", len(tools), len(want))
	}
	for _, tool := range tools {
		if got := tool.Def.Description; got != want[tool.Name] {
			t.Errorf("%s: description %q, want %q", tool.Name, got, want[tool.Name])
		}
	}
}
