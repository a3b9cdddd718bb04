package config

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
)

// The skills key (the Skills extension, SEP-2640): globs of skill
// directories, each holding a SKILL.md, read from the plugin's directory
// on every load. Parsed here and hooked into [configParser.plugin] by one
// line.

func init() { pluginKeys = append(pluginKeys, "skills") }

// pluginSkills reads skills = ["skills/*", …]. A relative glob is
// resolved against the plugin's directory (see pluginDir).
func (p *configParser) pluginSkills(s section, m map[string]any, spec *Spec) {
	pats, ok := s.strings(m, "skills")
	if !ok {
		return
	}
	dir := p.pluginDir(spec)
	for i, pat := range pats {
		if pat == "" {
			s.errf("skills", "element %d is empty: want a directory or a glob of directories, such as \"skills/*\"", i)
			continue
		}
		abs := filepath.Clean(pat)
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(dir, abs)
		}
		if _, err := filepath.Match(abs, ""); err != nil {
			s.errf("skills", "element %d: bad glob pattern %q", i, pat)
			continue
		}
		spec.Skills = append(spec.Skills, abs)
	}
}

// pluginDir is where a plugin's own files are: its Go-source directory,
// its build directory, the directory of its .wasm file, or (a url or oci
// plugin) the config file's.
func (p *configParser) pluginDir(spec *Spec) string {
	switch {
	case spec.Source != "":
		return spec.Source
	case spec.BuildDir != "":
		return spec.BuildDir
	case spec.Path != "" && spec.URL == "" && spec.OCI == "":
		return filepath.Dir(spec.Path)
	}
	return p.dir
}

// skillWatchPaths are what a watcher watches for spec's skills: each glob
// (a skill directory created or removed), and every directory within the
// skill directories it matches now, as "dir/*" (a file saved). The list
// is computed again at every reload, so new directories join it.
func skillWatchPaths(spec *Spec) []string {
	var out []string
	for _, pat := range spec.Skills {
		out = append(out, pat)
		dirs, _ := filepath.Glob(pat)
		for _, d := range dirs {
			_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
				if err != nil || !e.IsDir() {
					return nil
				}
				if p != d && strings.HasPrefix(e.Name(), ".") {
					return filepath.SkipDir
				}
				out = append(out, filepath.Join(p, "*"))
				return nil
			})
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
