package config

import (
	"fmt"
	"path/filepath"
	"strings"
)

// buildKeys are the [[plugin]] keys of a plugin built by a command of its
// own (any language): build, watch and dir.
var buildKeys = []string{"build", "watch", "dir"}

// pluginBuild reads build, watch and dir into spec. build needs path (the
// artefact it writes); watch and dir need build. Watch globs and the
// build directory are resolved against dir, which is resolved against the
// config's directory.
func (p *configParser) pluginBuild(s section, m map[string]any, spec *Spec) {
	_, hasBuild := m["build"]
	for _, k := range []string{"watch", "dir"} {
		if _, ok := m[k]; ok && !hasBuild {
			s.errf(k, "%s needs build (the command that writes path)", k)
		}
	}
	if !hasBuild {
		return
	}
	argv, ok := s.command(m, "build")
	if !ok {
		return
	}
	if _, ok := m["path"]; !ok {
		s.errf("build", "build needs path (the file the build writes); source plugins are built by mcphost itself")
		return
	}
	if _, ok := m["sha256"]; ok {
		s.errf("sha256", "sha256 pins a file as it is; a built path changes with every build (leave one of them out)")
	}
	dir := p.dir
	if v, ok := s.str(m, "dir"); ok {
		if v == "" {
			s.errf("dir", "must not be empty (leave it out to build in the config's directory)")
			return
		}
		dir = p.abs(v)
	}
	var globs []string
	if pats, ok := s.strings(m, "watch"); ok {
		for i, pat := range pats {
			g, msg := watchGlob(dir, pat)
			if msg != "" {
				s.errf("watch", "element %d %q: %s", i, pat, msg)
				continue
			}
			globs = append(globs, g)
		}
	}
	spec.Build, spec.BuildDir, spec.Watch = argv, dir, globs
}

// watchGlob resolves a watch glob against dir. Only its last element may
// hold pattern characters: the watcher watches the directory above it.
func watchGlob(dir, pat string) (string, string) {
	if pat == "" {
		return "", "must not be empty"
	}
	if !filepath.IsAbs(pat) {
		pat = filepath.Join(dir, pat)
	}
	pat = filepath.Clean(pat)
	if _, err := filepath.Match(pat, ""); err != nil {
		return "", "bad glob pattern"
	}
	if strings.ContainsAny(filepath.Dir(pat), `*?[\`) {
		return "", "only the file name may hold *, ? or [ (list each directory as a glob of its own)"
	}
	return pat, ""
}

// command reads a command: an array of strings (the argv), or a string
// split into words as [SplitWords] does. No shell runs it; a shell is
// asked for explicitly, as ["sh", "-c", "…"].
func (s section) command(m map[string]any, key string) ([]string, bool) {
	v := m[key]
	var argv []string
	switch v := v.(type) {
	case string:
		w, err := SplitWords(v)
		if err != nil {
			s.errf(key, "%v", err)
			return nil, false
		}
		argv = w
	case []any:
		var ok bool
		if argv, ok = s.strings(m, key); !ok {
			return nil, false
		}
	default:
		s.errf(key, "want a string or an array of strings, got %s", tomlType(v))
		return nil, false
	}
	if len(argv) == 0 || argv[0] == "" {
		s.errf(key, "names no command")
		return nil, false
	}
	return argv, true
}

// SplitWords splits a command line into words the way a POSIX shell would
// quote them, without expanding anything: words are separated by blanks;
// '…' keeps everything literally; "…" keeps everything but \" and \\;
// outside quotes \ keeps the next character. Nothing else is special
// ($, *, |, ; and redirections are plain characters).
func SplitWords(line string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // a word has begun (even an empty "")
		quote rune // ' or " while inside quotes
	)
	runes := []rune(line)
	for i := 0; i < len(runes); i++ {
		r := runes[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch {
			case r == '"':
				quote = 0
			case r == '\\' && i+1 < len(runes) && (runes[i+1] == '"' || runes[i+1] == '\\'):
				i++
				cur.WriteRune(runes[i])
			default:
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '\\':
			if i+1 == len(runes) {
				return nil, fmt.Errorf("%q ends with a lone backslash", line)
			}
			i++
			cur.WriteRune(runes[i])
			in = true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("%q: unterminated %c quote", line, quote)
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}
