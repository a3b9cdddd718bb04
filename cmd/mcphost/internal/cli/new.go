package cli

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"github.com/mcphost/mcphost/plugins/source"
	askit "github.com/mcphost/mcphost/sdk-guest/assemblyscript"
	ckit "github.com/mcphost/mcphost/sdk-guest/c"
	"github.com/mcphost/mcphost/sdk-guest/kittmpl"
	tskit "github.com/mcphost/mcphost/sdk-guest/ts"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

//go:embed kits
var kitFiles embed.FS

// kit scaffolds plugins in one language. To add a language, put its
// templates in kits/<lang>/ (each file "X.tmpl" becomes "X", with
// [scaffold]'s fields substituted by kittmpl.Render) and give its entry a dir.
type kit struct {
	lang    string
	dir     string   // under kits/; "" means the kit is not in this build
	next    []string // commands to suggest after scaffolding, run in the new directory
	missing string   // for a kit not in this build: what to do instead
	// write, for a kit that ships its own templates (sdk-guest/c,
	// sdk-guest/assemblyscript, sdk-guest/ts), writes them for plugin name
	// into dir.
	write func(dir, name string) error
}

// kits is the language table of `mcphost new`, the default first.
var kits = []kit{
	{lang: "go", dir: "kits/go", next: []string{
		"mcphost validate",
		`mcphost call {{.Name}}_count_words '{"text":"hello plugin world"}'`,
		"go test ./...   # and go vet, gopls: go.mod points at " + source.SDKCopyDir + ", the SDK mcphost carries",
	}},
	{lang: "c", write: ckit.Write, next: []string{
		"mcphost serve   # builds with build.sh now and on every save (clang, lld, wasi-libc; Debian: clang lld wasi-libc libclang-rt-14-dev-wasm32)",
	}},
	{lang: "assemblyscript", write: askit.Write, next: []string{
		"npm install",
		"mcphost serve   # runs npm run build:dev now and on every save (npm run build: the optimized module to ship)",
	}},
	{lang: "ts", write: tskit.Write, next: []string{
		"npm install",
		"mcphost serve   # runs npm run build (tsc, componentize-js: 10-60 s) now and on every save",
		"npm test        # calls the tool through mcphost",
	}},
}

// scaffold is the data the templates get.
type scaffold struct {
	Name   string // the plugin name (a valid plugins.toml name)
	Module string // the Go module path
	Scheme string // the URI scheme of its resources
	Dir    string // the absolute directory it is written to
	SDKDir string // the SDK copy go.mod replaces the SDK's module with, relative to Dir
}

// fields is s as the templates' fields, by name.
func (s scaffold) fields() map[string]string {
	return map[string]string{"Name": s.Name, "Module": s.Module, "Scheme": s.Scheme, "Dir": s.Dir, "SDKDir": s.SDKDir}
}

var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,31}$`) })

func cmdNew(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("new", stdout, stderr)
	lang := fs.String("lang", kits[0].lang, "the plugin's language: "+kitNames())
	dir := fs.String("dir", "", "the directory to create (default: ./NAME); it must not exist or be empty")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fs.Usage()
		return errUsage
	}
	name := pos[0]
	if !nameRE().MatchString(name) {
		return fmt.Errorf("plugin name %q: want 1-32 letters, digits, '_' or '-', starting with a letter", name)
	}
	k, err := findKit(*lang)
	if err != nil {
		return err
	}
	if *dir == "" {
		*dir = name
	}
	abs, err := filepath.Abs(*dir)
	if err != nil {
		return err
	}
	if ents, err := os.ReadDir(abs); err == nil && len(ents) > 0 {
		return fmt.Errorf("%s exists and is not empty; choose another --dir", abs)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if k.write != nil {
		return writeKit(k, name, *dir, abs, stdout)
	}
	data := scaffold{Name: name, Module: "example.com/" + strings.ToLower(name), Scheme: uriScheme(name), Dir: abs, SDKDir: source.SDKCopyDir}
	files, err := render(k, data)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(abs, f.name), f.data, 0o644); err != nil {
			return err
		}
	}
	if err := source.WriteSDKCopy(filepath.Join(abs, filepath.FromSlash(source.SDKCopyDir))); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "created %s plugin %q in %s:\n", k.lang, name, abs)
	for _, f := range files {
		fmt.Fprintf(stdout, "  %s\n", f.name)
	}
	fmt.Fprintf(stdout, "  %s/ (the SDK this mcphost carries; mcphost rewrites it when that changes)\n", source.SDKCopyDir)
	fmt.Fprintf(stdout, "next:\n  cd %s\n", *dir)
	for _, n := range k.next {
		fmt.Fprintf(stdout, "  %s\n", strings.ReplaceAll(n, "{{.Name}}", name))
	}
	return nil
}

// writeKit scaffolds with a kit that ships its own templates.
func writeKit(k kit, name, dir, abs string, stdout io.Writer) error {
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return err
	}
	if err := k.write(abs, name); err != nil {
		return fmt.Errorf("--lang %s: %w", k.lang, err)
	}
	fmt.Fprintf(stdout, "created %s plugin %q in %s:\n", k.lang, name, abs)
	err := filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(abs, p)
			fmt.Fprintf(stdout, "  %s\n", rel)
		}
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "next:\n  cd %s\n", dir)
	for _, n := range k.next {
		fmt.Fprintf(stdout, "  %s\n", n)
	}
	return nil
}

func findKit(lang string) (kit, error) {
	for _, k := range kits {
		if k.lang != lang {
			continue
		}
		if k.dir == "" && k.write == nil {
			return k, fmt.Errorf("--lang %s: not available in this build of mcphost (%s)", lang, k.missing)
		}
		return k, nil
	}
	return kit{}, fmt.Errorf("--lang %q: want one of %s", lang, kitNames())
}

func kitNames() string { return strings.Join(kitLangs(), ", ") }

// kitLangs lists the languages `mcphost new` scaffolds, the default first.
func kitLangs() []string {
	names := make([]string, len(kits))
	for i, k := range kits {
		names[i] = k.lang
	}
	return names
}

type outFile struct {
	name string
	data []byte
}

// render executes the kit's templates. Go files come out gofmt-ed without
// a formatter: the templates are gofmt-ed and substitute only inside
// strings and comments (TestGoKitGofmt), so that mcphost links no Go
// parser and printer (docs/operations.md, "Memory").
func render(k kit, data scaffold) ([]outFile, error) {
	ents, err := fs.ReadDir(kitFiles, k.dir)
	if err != nil {
		return nil, err
	}
	var out []outFile
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".tmpl")
		if !ok || e.IsDir() {
			continue
		}
		src, err := fs.ReadFile(kitFiles, path.Join(k.dir, e.Name()))
		if err != nil {
			return nil, err
		}
		text, err := kittmpl.Render(name, src, data.fields())
		if err != nil {
			return nil, fmt.Errorf("kit %s: %w", k.lang, err)
		}
		out = append(out, outFile{name, text})
	}
	return out, nil
}

// uriScheme turns a plugin name into a URI scheme (RFC 3986: a letter,
// then letters, digits, '+', '-' or '.').
func uriScheme(name string) string {
	return strings.ToLower(strings.ReplaceAll(name, "_", "-"))
}

// parseInterleaved parses fs's flags wherever they stand among the
// positional arguments (mcphost new NAME --lang go) and returns the
// positional ones.
func parseInterleaved(fs *flags, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
