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
	"sync"
)

// nameRE is what a plugin name may be: mcphost's plugin-name rule, minus
// '-', so the name is also a valid identifier and URI scheme in the kits'
// languages.
//
// Compiled at first use: only `mcphost new` needs it, and every other
// command would keep its program (≈ 11 kB) on the heap.
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,31}$`) })

// Write copies every file of fsys under root into dir, which it creates.
// A file whose name ends in ".tmpl" is rendered with [Render], {{.Name}}
// being name, and written without that suffix; every other file is copied
// byte for byte. Files named *.sh keep an executable mode. Write refuses
// to overwrite an existing file.
func Write(fsys fs.FS, root, dir, name string) error {
	if !nameRE().MatchString(name) {
		return fmt.Errorf("plugin name %q: want a letter, then up to 31 letters, digits or '_'", name)
	}
	fields := map[string]string{"Name": name}
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
			if b, err = Render(path.Base(p), b, fields); err != nil {
				return err
			}
			out = base
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

// Render returns the template src (called name in errors) with every
// action {{.Field}} (spaces allowed inside the braces) replaced by
// fields[Field]. A field not in fields and any other action are errors:
// the kits' templates only substitute names, and Render is not
// text/template, whose method calls by reflection keep the linker from
// dropping any exported method of the serving binary (see
// docs/operations.md, "Memory").
func Render(name string, src []byte, fields map[string]string) ([]byte, error) {
	var out bytes.Buffer
	rest := src
	for {
		i := bytes.Index(rest, []byte("{{"))
		if i < 0 {
			out.Write(rest)
			return out.Bytes(), nil
		}
		out.Write(rest[:i])
		line := 1 + bytes.Count(src[:len(src)-len(rest)+i], []byte("\n"))
		j := bytes.Index(rest[i:], []byte("}}"))
		if j < 0 {
			return nil, fmt.Errorf("template %s:%d: unclosed action", name, line)
		}
		action := rest[i : i+j+2]
		// The spaces text/template's lexer allows: not \f, \v or Unicode's.
		field, ok := strings.CutPrefix(strings.Trim(string(action[2:len(action)-2]), " \t\r\n"), ".")
		if !ok || !isField(field) {
			return nil, fmt.Errorf("template %s:%d: %s: only {{.Field}} is supported", name, line, action)
		}
		v, ok := fields[field]
		if !ok {
			return nil, fmt.Errorf("template %s:%d: no field %q", name, line, field)
		}
		out.WriteString(v)
		rest = rest[i+j+2:]
	}
}

// isField reports whether s may name a field in an action: a letter,
// then letters, digits or '_'.
func isField(s string) bool {
	for i, c := range s {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && (c >= '0' && c <= '9' || c == '_')) {
			return false
		}
	}
	return s != ""
}
