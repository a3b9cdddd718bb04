package kittmpl

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"text/template"
)

func TestWrite(t *testing.T) {
	fsys := fstest.MapFS{
		"t/a.c.tmpl":      {Data: []byte("name={{.Name}}")},
		"t/b.h":           {Data: []byte("kept {{.Name}} verbatim")},
		"t/build.sh.tmpl": {Data: []byte("echo {{.Name}}")},
		"t/sub/c.txt":     {Data: []byte("x")},
	}
	dir := t.TempDir()
	if err := Write(fsys, "t", dir, "demo"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{"a.c", "name=demo"},
		{"b.h", "kept {{.Name}} verbatim"},
		{"build.sh", "echo demo"},
		{"sub/c.txt", "x"},
	} {
		got, err := os.ReadFile(filepath.Join(dir, tc.file))
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.file, got, err, tc.want)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "build.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("build.sh: got mode %v, %v; want executable", fi.Mode(), err)
	}
	if err := Write(fsys, "t", dir, "demo"); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second Write: got %v; want an already-exists error", err)
	}
}

func TestWriteBadName(t *testing.T) {
	for _, name := range []string{"", "9x", "a-b", "a b", strings.Repeat("a", 33), "../x"} {
		if err := Write(fstest.MapFS{}, ".", t.TempDir(), name); err == nil {
			t.Errorf("Write(%q): got nil; want an error", name)
		}
	}
}

func TestRender(t *testing.T) {
	fields := map[string]string{"Name": "demo", "Dir": "/x/{{.Name}}"}
	for _, tc := range []struct {
		src, want, err string
	}{
		{src: "", want: ""},
		{src: "no actions { } }}", want: "no actions { } }}"},
		{src: "{{.Name}}", want: "demo"},
		{src: "a {{ .Name }} b {{.Dir}}\n", want: "a demo b /x/{{.Name}}\n"}, // values are not rendered again
		{src: "x\n{{.Module}}", err: `t:2: no field "Module"`},
		{src: "{{.Name", err: "t:1: unclosed action"},
		{src: "{{if .Name}}x{{end}}", err: "t:1: {{if .Name}}: only {{.Field}} is supported"},
		{src: "{{.Name.X}}", err: "only {{.Field}} is supported"},
		{src: "{{.}}", err: "only {{.Field}} is supported"},
		{src: "{{/* c */}}", err: "only {{.Field}} is supported"},
	} {
		got, err := Render("t", []byte(tc.src), fields)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Render(%q): got %q, %v; want an error with %q", tc.src, got, err, tc.err)
		case tc.err == "" && (err != nil || string(got) != tc.want):
			t.Errorf("Render(%q): got %q, %v; want %q", tc.src, got, err, tc.want)
		}
	}
}

// FuzzRender checks Render against text/template, which it stands in for:
// whatever Render accepts, text/template renders the same.
func FuzzRender(f *testing.F) {
	for _, s := range []string{"{{.Name}}", "a {{ .Name }} {{", "{{.X}}}}", "}}{{", "{{.Name }}\n{{-.Name}}", "{{.Name\f}}", "{{\u00a0.Name}}"} {
		f.Add(s)
	}
	fields := map[string]string{"Name": "demo", "Dir": "{{.Name}}"}
	f.Fuzz(func(t *testing.T, src string) {
		got, err := Render("t", []byte(src), fields)
		if err != nil {
			return
		}
		tm, err := template.New("t").Option("missingkey=error").Parse(src)
		if err != nil {
			t.Fatalf("Render(%q) = %q, but text/template: %v", src, got, err)
		}
		var want bytes.Buffer
		if err := tm.Execute(&want, fields); err != nil {
			t.Fatalf("Render(%q) = %q, but text/template: %v", src, got, err)
		}
		if string(got) != want.String() {
			t.Errorf("Render(%q) = %q; text/template gives %q", src, got, want.String())
		}
	})
}
