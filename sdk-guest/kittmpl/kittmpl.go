package kittmpl

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"
)

// nameRE is what a plugin name may be: mcphost's plugin-name rule, minus
// '-', so the name is also a valid identifier and URI scheme in the kits'
// languages.
var nameRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,31}$`)

// Data is what templates see.
type Data struct {
	Name string // the plugin name ({{.Name}})
}

// Write copies every file of fsys under root into dir, which it creates.
// A file whose name ends in ".tmpl" is rendered with text/template and
// written without that suffix; every other file is copied byte for byte.
// Files named *.sh keep an executable mode. Write refuses to overwrite an
// existing file.
func Write(fsys fs.FS, root, dir, name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("plugin name %q: want a letter, then up to 31 letters, digits or '_'", name)
	}
	data := Data{Name: name}
	return fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		out := filepath.Join(dir, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		if base, ok := strings.CutSuffix(out, ".tmpl"); ok {
			t, err := template.New(path.Base(p)).Option("missingkey=error").Parse(string(b))
			if err != nil {
				return fmt.Errorf("template %s: %w", p, err)
			}
			var buf bytes.Buffer
			if err := t.Execute(&buf, data); err != nil {
				return fmt.Errorf("template %s: %w", p, err)
			}
			out, b = base, buf.Bytes()
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(out, ".sh") {
			mode = 0o755
		}
		f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s already exists", out)
		}
		if err != nil {
			return err
		}
		if _, err := f.Write(b); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
}
