package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/plugins/config"
)

// buildWith builds a generation of specs under server.
func buildWith(t *testing.T, l *Loader, prev *Generation, server config.ServerConfig, specs ...config.Spec) *Generation {
	t.Helper()
	cfg := config.DefaultConfig()
	cfg.Server.ReadOnly = server.ReadOnly
	cfg.Plugins = specs
	g, err := l.Build(context.Background(), cfg, prev)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	t.Cleanup(func() { g.Close(context.Background()) })
	return g
}

func annotated(name string, readOnly *bool) string {
	if readOnly == nil {
		return tool(name)
	}
	b, _ := json.Marshal(abi.Tool{Name: name, Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`),
		Annotations: &abi.ToolAnnotations{ReadOnlyHint: readOnly}})
	return string(b)
}

func TestToolFilters(t *testing.T) {
	yes, no := true, false
	tools := []string{annotated("get", &yes), annotated("list_all", &yes), annotated("put", &no), annotated("plain", nil)}
	tests := []struct {
		name       string
		server     bool
		spec       config.Spec
		wantTools  []string
		wantHidden []string // name@filter
	}{
		{name: "no filter", wantTools: []string{"p_get", "p_list_all", "p_plain", "p_put"}},
		{name: "read_only", spec: config.Spec{ReadOnly: &yes},
			wantTools: []string{"p_get", "p_list_all"}, wantHidden: []string{"p_put@read_only", "p_plain@read_only"}},
		{name: "server read_only", server: true,
			wantTools: []string{"p_get", "p_list_all"}, wantHidden: []string{"p_put@read_only", "p_plain@read_only"}},
		{name: "plugin overrides server", server: true, spec: config.Spec{ReadOnly: &no},
			wantTools: []string{"p_get", "p_list_all", "p_plain", "p_put"}},
		{name: "read_only and include_tools", spec: config.Spec{ReadOnly: &yes, IncludeTools: []string{"list_*", "put"}},
			wantTools: []string{"p_list_all"}, wantHidden: []string{"p_get@include_tools", "p_put@read_only", "p_plain@read_only"}},
		{name: "read_only and exclude_tools", spec: config.Spec{ReadOnly: &yes, ExcludeTools: []string{"get"}},
			wantTools: []string{"p_list_all"}, wantHidden: []string{"p_get@exclude_tools", "p_put@read_only", "p_plain@read_only"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := tt.spec
			spec.Name, spec.Native = "p", fake{tools: tools}.module()
			g := buildWith(t, NewLoader(LoaderOptions{Logger: discard()}), nil, config.ServerConfig{ReadOnly: tt.server}, spec)
			if got := toolNames(g); !reflect.DeepEqual(got, tt.wantTools) {
				t.Errorf("tools = %q; want %q", got, tt.wantTools)
			}
			var hidden []string
			for _, h := range g.Plugin("p").Hidden {
				hidden = append(hidden, h.Name+"@"+h.Filter)
				if g.Tool(h.Name) != nil || g.Plugin("p").Tool(h.Original) != nil {
					t.Errorf("hidden tool %s is callable", h.Name)
				}
				if p, got := g.Hidden(h.Name); p == nil || got.Filter != h.Filter {
					t.Errorf("Hidden(%q) = %v, %v; want the %s filter", h.Name, p, got, h.Filter)
				}
				if _, err := g.Plugin("p").callTool(context.Background(), h.Original, nil, abi.Context{}, false); err == nil {
					t.Errorf("CallTool(%q) of a hidden tool succeeded", h.Original)
				}
			}
			if !reflect.DeepEqual(hidden, tt.wantHidden) {
				t.Errorf("hidden = %q; want %q", hidden, tt.wantHidden)
			}
		})
	}
}

// TestReadOnlyReload: turning read_only on in a reload takes the
// writing tools away, and the diff says the tools list changed.
func TestReadOnlyReload(t *testing.T) {
	yes, no := true, false
	l := NewLoader(LoaderOptions{Logger: discard()})
	m := fake{tools: []string{annotated("get", &yes), annotated("put", &no)}}.module()
	g1 := buildWith(t, l, nil, config.ServerConfig{}, config.Spec{Name: "p", Native: m})
	g2 := buildWith(t, l, g1, config.ServerConfig{ReadOnly: true}, config.Spec{Name: "p", Native: m})
	if got, want := toolNames(g2), []string{"p_get"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after reload: tools = %q; want %q", got, want)
	}
	if c := Diff(g1, g2); !c.Tools {
		t.Errorf("Diff after read_only = %+v; want Tools changed", c)
	}
	g3 := buildWith(t, l, g2, config.ServerConfig{}, config.Spec{Name: "p", Native: m})
	if got, want := toolNames(g3), []string{"p_get", "p_put"}; !reflect.DeepEqual(got, want) {
		t.Errorf("read_only off again: tools = %q; want %q", got, want)
	}
}

// writeAll writes file, making its directories.
func writeAll(t *testing.T, file, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, file, data)
}

func digest(b string) string {
	s := sha256.Sum256([]byte(b))
	return "sha256:" + hex.EncodeToString(s[:])
}

const pdfSkill = "---\nname: pdf-tools\ndescription: Fill PDF forms\nlicense: MIT\nmetadata:\n  version: \"2\"\n  tags: [a, b]\n---\n\n# PDF\n"

// guestSkills is a mcphost_list_skills export returning files.
func guestSkills(files ...abi.SkillFile) func(context.Context, []byte) ([]byte, error) {
	return func(context.Context, []byte) ([]byte, error) {
		return json.Marshal(abi.ListSkillsResult{Files: files})
	}
}

func TestSkills(t *testing.T) {
	dir := t.TempDir()
	writeAll(t, filepath.Join(dir, "skills/pdf-tools/SKILL.md"), pdfSkill)
	writeAll(t, filepath.Join(dir, "skills/pdf-tools/forms/FORMS.md"), "forms\n")
	writeAll(t, filepath.Join(dir, "skills/pdf-tools/.swp"), "editor junk")
	writeAll(t, filepath.Join(dir, "skills/pdf-tools/forms/eu/invoice.md"), "eu\n")
	// a skill nested in pdf-tools: its own skill, and pdf-tools' files too
	writeAll(t, filepath.Join(dir, "skills/pdf-tools/forms/eu/SKILL.md"), "---\nname: eu\ndescription: EU forms\n---\n")
	writeAll(t, filepath.Join(dir, "skills/Bad_Name/SKILL.md"), "---\nname: Bad_Name\ndescription: x\n---\n")
	writeAll(t, filepath.Join(dir, "skills/mismatch/SKILL.md"), "---\nname: other\ndescription: x\n---\n")
	writeAll(t, filepath.Join(dir, "skills/nodesc/SKILL.md"), "---\nname: nodesc\n---\n")
	writeAll(t, filepath.Join(dir, "skills/nofront/SKILL.md"), "# no frontmatter\n")
	writeAll(t, filepath.Join(dir, "skills/empty/README"), "no SKILL.md here")
	// the same URI as the guest's skill: refused
	writeAll(t, filepath.Join(dir, "skills/guide/SKILL.md"), "---\nname: guide\ndescription: dup\n---\n")
	writeAll(t, filepath.Join(dir, "skills/double--hyphen/SKILL.md"), "---\nname: double--hyphen\ndescription: x\n---\n")

	bin := string([]byte{0xff, 0x00, 0x01})
	m := fake{tools: []string{tool("t")}, exports: map[string]func(context.Context, []byte) ([]byte, error){
		abi.ExportListSkills: guestSkills(
			abi.SkillFile{Path: "guide/SKILL.md", Data: []byte("---\nname: guide\ndescription: How to use p\n---\nbody\n")},
			abi.SkillFile{Path: "guide/logo.bin", Data: []byte(bin)},
		)}}.module()
	l := NewLoader(LoaderOptions{Logger: discard()})
	spec := config.Spec{Name: "p", Native: m, Skills: []string{filepath.Join(dir, "skills/*"), filepath.Join(dir, "none/*")}}
	g := buildWith(t, l, nil, config.ServerConfig{}, spec)

	got := names(g.Skills, func(s *Skill) string { return s.URI })
	want := []string{"skill://p/guide/SKILL.md", "skill://p/pdf-tools/SKILL.md", "skill://p/pdf-tools/forms/eu/SKILL.md"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("skills = %q; want %q", got, want)
	}
	warnings := strings.Join(g.Plugin("p").Warnings(), "\n")
	for _, w := range []string{`"Bad_Name" is invalid`, `"other" differs from its directory "mismatch"`, `no "description"`,
		"does not begin with YAML frontmatter", "holds no SKILL.md", "skill://p/guide/SKILL.md is already served by the skill from the guest",
		`"double--hyphen" is invalid`, "matches no directory"} {
		if !strings.Contains(warnings, w) {
			t.Errorf("warnings lack %q:\n%s", w, warnings)
		}
	}

	pdf := g.Skill("skill://p/pdf-tools/SKILL.md")
	var entry struct {
		URI         string         `json:"uri"`
		Frontmatter map[string]any `json:"frontmatter"`
		Resources   []struct {
			URI, Digest string
			Size        int
		} `json:"resources"`
	}
	if err := json.Unmarshal(pdf.Entry, &entry); err != nil {
		t.Fatal(err)
	}
	wantFM := map[string]any{"name": "pdf-tools", "description": "Fill PDF forms", "license": "MIT",
		"metadata": map[string]any{"version": "2", "tags": []any{"a", "b"}}}
	if entry.URI != pdf.URI || !reflect.DeepEqual(entry.Frontmatter, wantFM) {
		t.Errorf("entry = %s; want uri %s and frontmatter %v", pdf.Entry, pdf.URI, wantFM)
	}
	files := map[string]string{
		"skill://p/pdf-tools/SKILL.md":            pdfSkill,
		"skill://p/pdf-tools/forms/FORMS.md":      "forms\n",
		"skill://p/pdf-tools/forms/eu/SKILL.md":   "---\nname: eu\ndescription: EU forms\n---\n",
		"skill://p/pdf-tools/forms/eu/invoice.md": "eu\n",
	}
	if len(entry.Resources) != len(files) {
		t.Errorf("resources = %+v; want the %d files (hidden ones left out)", entry.Resources, len(files))
	}
	for _, r := range entry.Resources {
		body, ok := files[r.URI]
		if !ok || r.Digest != digest(body) || r.Size != len(body) {
			t.Errorf("resource %+v; want digest %s size %d", r, digest(body), len(body))
		}
		f := g.SkillFile(r.URI)
		if f == nil || string(f.Data) != body {
			t.Errorf("SkillFile(%s) = %v; want the file's bytes", r.URI, f)
		}
	}
	// the nested skill's own SKILL.md resolves to it
	if f := g.SkillFile("skill://p/pdf-tools/forms/eu/SKILL.md"); f == nil || f.Skill.Name != "eu" {
		t.Errorf("nested SKILL.md belongs to %v; want skill eu", f)
	}
	if f := g.SkillFile("skill://p/guide/logo.bin"); f == nil || f.MIMEType != "application/octet-stream" || f.Digest != digest(bin) {
		t.Errorf("guest binary file = %+v", f)
	}
	if g.Skill("skill://p/pdf-tools/forms/FORMS.md") != nil || g.Skill("skill://p/none/SKILL.md") != nil {
		t.Error("Skill answers for a URI that is no skill's SKILL.md")
	}

	// Each SKILL.md is a listed resource, named and described from its frontmatter.
	r := g.Resource("skill://p/pdf-tools/SKILL.md")
	if r == nil || r.Def.Name != "pdf-tools" || r.Def.Description != "Fill PDF forms" || r.Def.MimeType != "text/markdown" {
		t.Errorf("resource of SKILL.md = %+v", r)
	}

	for _, tt := range []struct {
		uri  string
		want []string // uri@mime
	}{
		{"skill://p", []string{"skill://p/guide@" + DirMIME, "skill://p/pdf-tools@" + DirMIME}},
		{"skill://p/pdf-tools", []string{"skill://p/pdf-tools/SKILL.md@text/markdown", "skill://p/pdf-tools/forms@" + DirMIME}},
		{"skill://p/pdf-tools/forms", []string{"skill://p/pdf-tools/forms/FORMS.md@text/markdown", "skill://p/pdf-tools/forms/eu@" + DirMIME}},
		{"skill://p/pdf-tools/SKILL.md", nil},
		{"skill://p/pdf-tools/", nil},
		{"skill://p/pdf", nil},
		{"file:///p", nil},
	} {
		children, ok := g.SkillDir(tt.uri)
		got := names(children, func(e DirEntry) string { return e.URI + "@" + e.MIMEType })
		if ok != (tt.want != nil) || !reflect.DeepEqual(got, append([]string{}, tt.want...)) && tt.want != nil {
			t.Errorf("SkillDir(%s) = %q, %v; want %q", tt.uri, got, ok, tt.want)
		}
	}

	// A save of a skill file is a new generation whose resources changed,
	// naming the skill's files as updated; an unchanged rebuild is none.
	g2 := buildWith(t, l, g, config.ServerConfig{}, spec)
	if c := Diff(g, g2); c.Resources || len(c.Updated) > 0 {
		t.Errorf("unchanged rebuild: %+v; want no change", c)
	}
	writeAll(t, filepath.Join(dir, "skills/pdf-tools/forms/FORMS.md"), "forms v2\n")
	g3 := buildWith(t, l, g2, config.ServerConfig{}, spec)
	c := Diff(g2, g3)
	if !c.Resources || !slices.Contains(c.Updated, "skill://p/pdf-tools/forms/FORMS.md") || slices.Contains(c.Updated, "skill://p/guide/SKILL.md") {
		t.Errorf("after a save: %+v; want Resources and the pdf-tools files updated", c)
	}
	if f := g3.SkillFile("skill://p/pdf-tools/forms/FORMS.md"); f == nil || f.Digest != digest("forms v2\n") {
		t.Errorf("after a save: %+v; want the new digest", f)
	}
	if err := os.RemoveAll(filepath.Join(dir, "skills/pdf-tools")); err != nil {
		t.Fatal(err)
	}
	g4 := buildWith(t, l, g3, config.ServerConfig{}, spec)
	if g4.Skill("skill://p/pdf-tools/SKILL.md") != nil || g4.Resource("skill://p/pdf-tools/SKILL.md") != nil || !Diff(g3, g4).Resources {
		t.Error("a removed skill is still served, or its removal changed no list")
	}
}

// TestSkillsLimits: a skills directory over a limit (a sparse file of
// 3 GiB, more entries than MaxSkillEntries) fails its plugin's load with
// a message naming the file and the limit, before anything is read;
// another plugin loads all the same, and on a reload the failing
// plugin's previous version, its skills included, keeps serving.
func TestSkillsLimits(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(t *testing.T, skill string) // makes skill's directory go over a limit
		want  []string
	}{
		{"sparse file", func(t *testing.T, skill string) {
			f, err := os.Create(filepath.Join(skill, "data.bin"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt([]byte{1}, 3<<30); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}, []string{"data.bin is 3221225473 bytes", "16 MiB (16777216 bytes)"}},
		{"too many entries", func(t *testing.T, skill string) {
			for i := range MaxSkillEntries - 3 {
				writeAll(t, filepath.Join(skill, "refs", fmt.Sprint(i)), "")
			}
			writeAll(t, filepath.Join(skill, ".swp"), "") // hidden ones count: 1025 in all
			writeAll(t, filepath.Join(skill, ".git", "HEAD"), "")
		}, []string{"holds more than 1024 directory entries"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			skill := filepath.Join(dir, "skills", "pdf-tools")
			writeAll(t, filepath.Join(skill, "SKILL.md"), pdfSkill)
			l := NewLoader(LoaderOptions{Logger: discard()})
			p := config.Spec{Name: "p", Native: fake{tools: []string{tool("t")}}.module(), Skills: []string{filepath.Join(dir, "skills/*")}}
			q := config.Spec{Name: "q", Native: fake{tools: []string{tool("t")}}.module()}
			g := buildWith(t, l, nil, config.ServerConfig{}, p, q)
			if g.Skill("skill://p/pdf-tools/SKILL.md") == nil {
				t.Fatal("the skill is not served before the limit is broken")
			}
			tt.spoil(t, skill)
			for _, prev := range []*Generation{g, nil} { // a reload, and a first start
				g2 := buildWith(t, l, prev, config.ServerConfig{}, p, q)
				if len(g2.Failures) != 1 || g2.Failures[0].Plugin != "p" || g2.Failures[0].Kept != (prev != nil) {
					t.Fatalf("failures %+v; want p's alone, kept %v", g2.Failures, prev != nil)
				}
				msg := g2.Failures[0].Err.Error()
				for _, w := range append(tt.want, skill) {
					if !strings.Contains(msg, w) {
						t.Errorf("failure %q; want it to say %q", msg, w)
					}
				}
				if g2.Plugin("q") == nil || g2.Tool("q_t") == nil {
					t.Error("plugin q does not serve beside the failing p")
				}
				if served := g2.Skill("skill://p/pdf-tools/SKILL.md") != nil; served != (prev != nil) {
					t.Errorf("p's skill served: %v; want %v (the previous version kept on a reload)", served, prev != nil)
				}
			}
		})
	}
}

func TestParseFrontmatter(t *testing.T) {
	tests := []struct {
		name, in string
		want     map[string]any
		err      string
	}{
		{"minimal", "---\nname: a\ndescription: b\n---\nbody", map[string]any{"name": "a", "description": "b"}, ""},
		{"crlf and bom", "\ufeff---\r\nname: a\r\n---\r\n", map[string]any{"name": "a"}, ""},
		{"empty block", "---\n---\n", map[string]any{}, ""},
		{"nested", "---\nmetadata:\n  n: 1\n  f: 1.5\n  b: true\n  l: [x]\n---\n",
			map[string]any{"metadata": map[string]any{"n": 1, "f": 1.5, "b": true, "l": []any{"x"}}}, ""},
		{"no frontmatter", "# title\n", nil, "does not begin"},
		{"not closed", "---\nname: a\n", nil, "not closed"},
		{"bad yaml", "---\nname: [a\n---\n", nil, "not valid YAML"},
		{"non-string key", "---\nmetadata:\n  1: x\n---\n", nil, "not a string"},
		{"list at top", "---\n- a\n---\n", nil, "not valid YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseFrontmatter([]byte(tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v; want %q", err, tt.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("= %#v, %v; want %#v", got, err, tt.want)
			}
		})
	}
}

// FuzzParseFrontmatter: SKILL.md files are plugin authors' bytes. Parsing
// never panics, and what it accepts always converts to JSON.
func FuzzParseFrontmatter(f *testing.F) {
	f.Add([]byte(pdfSkill))
	f.Add([]byte("---\nname: a\n---\n"))
	f.Add([]byte("---\na: !!binary aGk=\nb: 2001-12-14\nc: &x [*x]\n---\n"))
	f.Add([]byte("---\n? [a]\n: b\n---\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		fm, err := ParseFrontmatter(b)
		if err != nil {
			return
		}
		if _, err := json.Marshal(fm); err != nil {
			t.Fatalf("accepted frontmatter does not convert to JSON: %v", err)
		}
	})
}

// FuzzGuestSkills: a guest's skill files are untrusted. Whatever paths
// and bytes it returns (readSkillFiles admits only valid relative paths),
// the skills built never panic, every file lies in its skill's directory,
// and every digest and entry are those of the bytes served.
func FuzzGuestSkills(f *testing.F) {
	f.Add("a/SKILL.md", "---\nname: a\ndescription: d\n---\n", "a/b/SKILL.md", "---\nname: b\ndescription: d\n---\n")
	f.Add("SKILL.md", "---\nname: x\ndescription: d\n---\n", "x/y", "z")
	f.Add("a/SKILL.md", "---\nname: a\n---\n", "a/SKILL.md/x", "")
	f.Fuzz(func(t *testing.T, p1, d1, p2, d2 string) {
		var files []abi.SkillFile
		for _, f := range []abi.SkillFile{{Path: p1, Data: []byte(d1)}, {Path: p2, Data: []byte(d2)}} {
			if fs.ValidPath(f.Path) && f.Path != "." && !slices.ContainsFunc(files, func(g abi.SkillFile) bool { return g.Path == f.Path }) {
				files = append(files, f)
			}
		}
		set := loadSkills(&config.Spec{Name: "p"}, files, nil)
		for _, s := range set.skills {
			if !ValidSkillName(s.Name) || !strings.HasSuffix(s.Dir, "/"+s.Name) || s.URI != s.Dir+"/SKILL.md" {
				t.Fatalf("skill %q at %s", s.Name, s.URI)
			}
			if !json.Valid(s.Entry) {
				t.Fatalf("entry %s is not JSON", s.Entry)
			}
			for _, f := range s.Files {
				if !strings.HasPrefix(f.URI, s.Dir+"/") || f.Digest != digest(string(f.Data)) {
					t.Fatalf("file %s (digest %s) of skill %s", f.URI, f.Digest, s.Dir)
				}
			}
		}
	})
}
