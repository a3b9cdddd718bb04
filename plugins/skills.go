package plugins

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"mime"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/internal/opfile"
)

// Skills (SEP-2640, the io.modelcontextprotocol/skills extension). A
// plugin ships skills two ways: its guest returns their files from
// abi.ExportListSkills (sdk-guest's AddSkills), or its plugins.toml table
// names skill directories (`skills = ["skills/*"]`, read from disk on
// every load). Either way a skill is a directory holding a SKILL.md that
// begins with YAML frontmatter; mcphost parses it, checks the name and
// computes each file's digest and size, and serves the skill at
// skill://<plugin>/<name>/SKILL.md.

// Limits of one skill (SEP-2640 "Limits"): servers should not serve more.
// A skills directory is read within MaxSkillBytes and MaxSkillEntries
// (package opfile checks sizes and counts before reading); over either,
// the plugin's load fails.
const (
	MaxSkillFiles = 512
	MaxSkillBytes = 16 << 20
	// MaxSkillEntries bounds the directory entries listed below one
	// skills directory: files, subdirectories, hidden and skipped ones.
	MaxSkillEntries = 2 * MaxSkillFiles
)

// skillNameRE is the Agent Skills naming rule: 1-64 lowercase letters,
// digits and hyphens, no leading, trailing or doubled hyphen (checked
// apart, as RE2 has no lookahead).
var skillNameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$`) })

// ValidSkillName reports whether name follows the Agent Skills naming rule.
func ValidSkillName(name string) bool {
	return skillNameRE().MatchString(name) && !strings.Contains(name, "--")
}

// Skill is one skill a plugin serves.
type Skill struct {
	Plugin      *Plugin
	Name        string         // frontmatter name, also the URI's last skill-path segment
	Description string         // frontmatter description
	URI         string         // skill://<plugin>/<path>/SKILL.md
	Dir         string         // the skill's root directory resource: URI without "/SKILL.md"
	Frontmatter map[string]any // the SKILL.md frontmatter, verbatim
	Files       []*SkillFile   // every file, SKILL.md included, sorted by URI
	// Entry is the skill's SEP-2640 entry, {uri, frontmatter, resources}.
	Entry json.RawMessage
	// From says where the skill came from (a directory, or "the guest").
	From string
}

// SkillFile is one file of a skill, served by resources/read.
type SkillFile struct {
	Skill    *Skill
	URI      string
	Name     string // the file's base name
	MIMEType string
	Data     []byte
	Digest   string // "sha256:<64 hex>"
}

// rawSkillFile is a file as a source gives it: a slash path and bytes.
type rawSkillFile struct {
	path string
	data []byte
}

// skillSet is what a plugin's sources yield: its skills and the
// refusals, each a plain sentence naming what to change.
type skillSet struct {
	skills  []*Skill
	refused []string
}

// buildSkills groups files into skills for plugin, from (for messages):
// every directory holding a SKILL.md is one, named by its frontmatter.
// A skill nested in another (a SKILL.md below a skill root) is a skill of
// its own and, as SEP-2640 says, its files belong to the enclosing one too.
func buildSkills(plugin, from string, files []rawSkillFile, set *skillSet, taken map[string]string) {
	slices.SortFunc(files, func(a, b rawSkillFile) int { return strings.Compare(a.path, b.path) })
	var roots []string
	for _, f := range files {
		if path.Base(f.path) == "SKILL.md" {
			roots = append(roots, path.Dir(f.path))
		}
	}
	// top returns the outermost root enclosing r (r itself when none).
	top := func(r string) string {
		t := r
		for _, o := range roots {
			if under(r, o) && len(o) < len(t) {
				t = o
			}
		}
		return t
	}
	for _, root := range roots {
		base := path.Dir(top(root))
		var own []rawSkillFile
		for _, f := range files {
			if under(f.path, root) {
				own = append(own, f)
			}
		}
		sk, err := newSkill(plugin, relTo(root, base), root, own, base)
		if err != nil {
			set.refused = append(set.refused, fmt.Sprintf("skill %s (%s): %v", root, from, err))
			continue
		}
		if prev, dup := taken[sk.URI]; dup {
			set.refused = append(set.refused, fmt.Sprintf("skill %s (%s): %s is already served by the skill from %s; rename one of them", root, from, sk.URI, prev))
			continue
		}
		taken[sk.URI] = from
		sk.From = from
		set.skills = append(set.skills, sk)
	}
}

// under reports whether p is dir or lies below it ("." holds everything).
func under(p, dir string) bool {
	return dir == "." || p == dir || strings.HasPrefix(p, dir+"/")
}

// relTo is p relative to base (both slash paths, p under base).
func relTo(p, base string) string {
	if base == "." {
		return p
	}
	return strings.TrimPrefix(p, base+"/")
}

// newSkill builds the skill whose root is root, served at
// skill://<plugin>/<skillPath>, from its files. Paths are the source's;
// base is the directory above the outermost skill root, and a file's URI
// is its path relative to base.
func newSkill(plugin, skillPath, root string, files []rawSkillFile, base string) (*Skill, error) {
	var md []byte
	for _, f := range files {
		if f.path == path.Join(root, "SKILL.md") {
			md = f.data
		}
	}
	fm, err := ParseFrontmatter(md)
	if err != nil {
		return nil, err
	}
	name, _ := fm["name"].(string)
	desc, _ := fm["description"].(string)
	switch {
	case name == "":
		return nil, errors.New(`SKILL.md frontmatter has no "name" string; add name: <skill-name>`)
	case !ValidSkillName(name):
		return nil, fmt.Errorf("skill name %q is invalid: want 1-64 lowercase letters, digits and hyphens, without a hyphen at either end or two in a row", name)
	case name != path.Base(root):
		return nil, fmt.Errorf("skill name %q differs from its directory %q: the Agent Skills format wants them equal; rename one", name, path.Base(root))
	case desc == "":
		return nil, errors.New(`SKILL.md frontmatter has no "description" string; add description: <what the skill does and when to use it>`)
	case len(files) > MaxSkillFiles:
		return nil, fmt.Errorf("%d files, more than the %d a host must accept (SEP-2640 limits); split the skill", len(files), MaxSkillFiles)
	}
	total := 0
	for _, f := range files {
		total += len(f.data)
	}
	if total > MaxSkillBytes {
		return nil, fmt.Errorf("%d bytes in all, more than the %d a host must accept (SEP-2640 limits); move large files out", total, MaxSkillBytes)
	}
	prefix := "skill://" + plugin + "/"
	sk := &Skill{Name: name, Description: desc, Frontmatter: fm}
	sk.Dir = prefix + skillPath
	sk.URI = sk.Dir + "/SKILL.md"
	type res struct {
		URI    string `json:"uri"`
		Digest string `json:"digest"`
		Size   int    `json:"size"`
	}
	entry := struct {
		URI         string         `json:"uri"`
		Frontmatter map[string]any `json:"frontmatter"`
		Resources   []res          `json:"resources"`
	}{URI: sk.URI, Frontmatter: fm, Resources: []res{}}
	for _, f := range files {
		sum := sha256.Sum256(f.data)
		sf := &SkillFile{Skill: sk, URI: prefix + relTo(f.path, base), Name: path.Base(f.path),
			MIMEType: skillMIME(f.path, f.data), Data: f.data, Digest: "sha256:" + hex.EncodeToString(sum[:])}
		sk.Files = append(sk.Files, sf)
		entry.Resources = append(entry.Resources, res{sf.URI, sf.Digest, len(f.data)})
	}
	if sk.Entry, err = json.Marshal(entry); err != nil {
		return nil, fmt.Errorf("frontmatter does not convert to JSON: %w", err)
	}
	return sk, nil
}

// skillMIME is a file's media type: text/markdown for .md, what the
// extension says otherwise, and text/plain or application/octet-stream
// by content when it says nothing.
func skillMIME(p string, data []byte) string {
	ext := strings.ToLower(path.Ext(p))
	if ext == ".md" || ext == ".markdown" {
		return "text/markdown"
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	if utf8.Valid(data) {
		return "text/plain"
	}
	return "application/octet-stream"
}

// ParseFrontmatter reads the YAML frontmatter that begins a SKILL.md: a
// "---" line, the YAML, a "---" line. It returns it as a JSON-ready map;
// keys must be strings and values must convert to JSON.
func ParseFrontmatter(md []byte) (map[string]any, error) {
	md = bytes.TrimPrefix(md, []byte("\ufeff"))
	rest, ok := cutLine(md, "---")
	if !ok {
		return nil, errors.New(`SKILL.md does not begin with YAML frontmatter: want a first line "---", the YAML, then a line "---"`)
	}
	var yml []byte
	for len(rest) > 0 {
		line, next, _ := bytes.Cut(rest, []byte("\n"))
		if string(bytes.TrimRight(line, " \t\r")) == "---" {
			var fm map[string]any
			if err := yaml.Unmarshal(yml, &fm); err != nil {
				return nil, fmt.Errorf("SKILL.md frontmatter is not valid YAML: %w", err)
			}
			v, err := jsonReady(fm)
			if err != nil {
				return nil, fmt.Errorf("SKILL.md frontmatter: %w", err)
			}
			m, _ := v.(map[string]any)
			if m == nil {
				m = map[string]any{}
			}
			return m, nil
		}
		yml = append(append(yml, line...), '\n')
		rest = next
	}
	return nil, errors.New(`SKILL.md frontmatter is not closed: want a line "---" after the YAML`)
}

// cutLine returns what follows b's first line when that line is want
// (ignoring a trailing \r).
func cutLine(b []byte, want string) ([]byte, bool) {
	line, rest, found := bytes.Cut(b, []byte("\n"))
	return rest, found && string(bytes.TrimRight(line, " \t\r")) == want
}

// jsonReady checks that v (decoded YAML) converts to JSON as it reads:
// maps with string keys, and scalars JSON has.
func jsonReady(v any) (any, error) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			r, err := jsonReady(e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			t[k] = r
		}
		return t, nil
	case map[any]any:
		return nil, errors.New("a mapping has a key that is not a string; quote it")
	case []any:
		for i, e := range t {
			r, err := jsonReady(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			t[i] = r
		}
		return t, nil
	case nil, string, bool, int, int64, uint64, float64:
		return t, nil
	}
	return nil, fmt.Errorf("a %T value has no JSON form; quote it", v)
}

// dirSkills is what a plugin's skills globs read: each skill
// directory's files, under its base name, and the refusals.
type dirSkills struct {
	files   map[string][]rawSkillFile
	refused []string
}

// readSkillDirs reads the skill directories spec's skills globs name,
// each with the one reader of operator files (opfile.ReadTree). A
// directory it cannot read is a refusal; one over a limit (an
// *opfile.LimitError, naming the file and the limit) is the error, and
// the plugin's load fails on it.
func readSkillDirs(spec *config.Spec) (*dirSkills, error) {
	out := &dirSkills{files: map[string][]rawSkillFile{}}
	for _, pat := range spec.Skills {
		dirs, err := filepath.Glob(pat)
		if err != nil {
			out.refused = append(out.refused, fmt.Sprintf("skills %q: %v", pat, err))
			continue
		}
		found := false
		for _, d := range dirs {
			if st, err := os.Stat(d); err != nil || !st.IsDir() {
				continue
			}
			found = true
			files, err := readSkillDir(d)
			if le := (*opfile.LimitError)(nil); errors.As(err, &le) {
				return nil, fmt.Errorf("skills %q: %w; move large files out of the skill", pat, err)
			}
			if err != nil {
				out.refused = append(out.refused, fmt.Sprintf("skills %q: %v", pat, err))
				continue
			}
			if !slices.ContainsFunc(files, func(f rawSkillFile) bool { return f.path == path.Join(filepath.Base(d), "SKILL.md") }) {
				out.refused = append(out.refused, fmt.Sprintf("skills %q: %s holds no SKILL.md, so it is no skill; add one or narrow the glob", pat, d))
				continue
			}
			out.files[d] = files
		}
		if !found {
			out.refused = append(out.refused, fmt.Sprintf("skills %q matches no directory", pat))
		}
	}
	return out, nil
}

// readSkillDir reads every regular file below dir, hidden ones (".x")
// aside, as paths under dir's base name.
func readSkillDir(dir string) ([]rawSkillFile, error) {
	read, err := opfile.ReadTree(dir, opfile.TreeLimits{Bytes: MaxSkillBytes, Entries: MaxSkillEntries})
	if err != nil {
		return nil, err
	}
	files := make([]rawSkillFile, 0, len(read))
	for _, f := range read {
		files = append(files, rawSkillFile{path: filepath.Base(dir) + "/" + f.Path, data: f.Data})
	}
	return files, nil
}

// loadSkills returns the skills of spec's plugin: its guest's, then those
// of its skills directories (dirs, as readSkillDirs read them; nil for
// none).
func loadSkills(spec *config.Spec, guest []abi.SkillFile, dirs *dirSkills) skillSet {
	var set skillSet
	taken := map[string]string{}
	if len(guest) > 0 {
		files := make([]rawSkillFile, 0, len(guest))
		for _, f := range guest {
			files = append(files, rawSkillFile{path: path.Clean(f.Path), data: f.Data})
		}
		buildSkills(spec.Name, "the guest", files, &set, taken)
	}
	if dirs != nil {
		set.refused = append(set.refused, dirs.refused...)
		for _, d := range slices.Sorted(maps.Keys(dirs.files)) {
			buildSkills(spec.Name, d, dirs.files[d], &set, taken)
		}
	}
	slices.SortFunc(set.skills, func(a, b *Skill) int { return strings.Compare(a.URI, b.URI) })
	return set
}

// skillsHash identifies a plugin's skills (for its view hash).
func skillsHash(skills []*Skill) string {
	h := sha256.New()
	for _, s := range skills {
		h.Write(s.Entry)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// skillResource is the resources/list item of a SKILL.md: named and
// described from its frontmatter, as SEP-2640 asks.
func skillResource(p *Plugin, s *Skill) *Resource {
	def := abi.Resource{URI: s.URI, Name: s.Name, Description: s.Description, MimeType: "text/markdown"}
	raw, _ := json.Marshal(def)
	return &Resource{Plugin: p, Def: def, Raw: raw}
}

// Skill returns the skill whose SKILL.md is at uri, or nil.
func (g *Generation) Skill(uri string) *Skill {
	if g == nil {
		return nil
	}
	f := g.skillFiles[uri]
	if f == nil || f.Skill.URI != uri {
		return nil
	}
	return f.Skill
}

// SkillFile returns the skill file at uri, or nil.
func (g *Generation) SkillFile(uri string) *SkillFile {
	if g == nil {
		return nil
	}
	return g.skillFiles[uri]
}

// DirEntry is a direct child of a skill directory (resources/directory/read):
// a file, or a subdirectory (MIMEType inode/directory).
type DirEntry struct {
	URI, Name, MIMEType string
	Plugin              *Plugin
}

// DirMIME is the media type of a directory resource.
const DirMIME = "inode/directory"

// SkillDir returns the direct children of the directory resource uri,
// sorted by URI: every skill root, and every directory within the skill
// namespaces (skill://<plugin>, the roots and their subdirectories), is
// one. ok is false when uri is no directory.
func (g *Generation) SkillDir(uri string) (children []DirEntry, ok bool) {
	if g == nil || !strings.HasPrefix(uri, "skill://") || strings.HasSuffix(uri, "/") {
		return nil, false
	}
	seen := map[string]bool{}
	for u, f := range g.skillFiles {
		rest, found := strings.CutPrefix(u, uri+"/")
		if !found {
			continue
		}
		ok = true
		seg, _, isDir := strings.Cut(rest, "/")
		child := uri + "/" + seg
		if seen[child] {
			continue
		}
		seen[child] = true
		e := DirEntry{URI: child, Name: seg, MIMEType: f.MIMEType, Plugin: f.Skill.Plugin}
		if isDir {
			e.MIMEType = DirMIME
		}
		children = append(children, e)
	}
	slices.SortFunc(children, func(a, b DirEntry) int { return strings.Compare(a.URI, b.URI) })
	return children, ok
}

// setSkills gives p the skills of set, read from dirs (kept for the
// generations that reuse them), each SKILL.md also listed among its
// resources, and keeps the refusals for Warnings.
func (p *Plugin) setSkills(set skillSet, dirs *dirSkills) {
	p.skillDirs = dirs
	p.Skills = set.skills
	p.skillWarnings = set.refused
	for _, s := range set.skills {
		s.Plugin = p
		p.Resources = append(p.Resources, skillResource(p, s))
	}
	slices.SortStableFunc(p.Resources, func(a, b *Resource) int { return strings.Compare(a.Def.URI, b.Def.URI) })
}

// indexSkills sorts the generation's skills and indexes their files.
func (g *Generation) indexSkills() {
	slices.SortFunc(g.Skills, func(a, b *Skill) int { return strings.Compare(a.URI, b.URI) })
	g.skillFiles = map[string]*SkillFile{}
	for _, s := range g.Skills {
		for _, f := range s.Files {
			if o := g.skillFiles[f.URI]; o == nil || len(o.Skill.URI) < len(s.URI) {
				g.skillFiles[f.URI] = f // a nested skill's file: its own skill wins
			}
		}
	}
}

// skillsChanged reports whether the skills of o and n differ, and adds
// to updated the URIs of the files of every skill added, removed or
// changed (their SKILL.md is also a listed resource; the other files are
// read by URI, and a subscriber to one hears of its change too).
func skillsChanged(o, n *Generation, updated map[string]bool) bool {
	entries := func(g *Generation) map[string]*Skill {
		m := make(map[string]*Skill, len(g.Skills))
		for _, s := range g.Skills {
			m[s.URI] = s
		}
		return m
	}
	om, nm := entries(o), entries(n)
	diff := false
	note := func(a, b *Skill) {
		if a != nil && b != nil && bytes.Equal(a.Entry, b.Entry) {
			return
		}
		diff = true
		for _, s := range []*Skill{a, b} {
			if s != nil {
				for _, f := range s.Files {
					updated[f.URI] = true
				}
			}
		}
	}
	for u, s := range om {
		note(s, nm[u])
	}
	for u, s := range nm {
		if om[u] == nil {
			note(nil, s)
		}
	}
	return diff
}
