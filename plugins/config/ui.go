package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/plugins/internal/opfile"
)

// UI is a plugin's [plugin.ui] table: the MCP Apps (SEP-1865) its tools
// show, and what those apps' pages may load.
type UI struct {
	// Tools maps a tool, by the plugin's own name, to its page: a file
	// name relative to the plugin's directory, slash-separated. Several
	// tools may share a page.
	Tools map[string]string
	// Pages holds each page named in Tools.
	Pages map[string]UIPage
	// CSP lists the origins the apps' pages may reach, by kind; empty
	// means none. It applies to every app the plugin serves, those the
	// guest lists itself included: a plugin cannot widen its own.
	CSP UICSP
}

// UIPage is one HTML page of a [plugin.ui] table, read with the config,
// so that a missing file is reported with its line and an edit is a
// change of config (a reload).
type UIPage struct {
	File string `owned:"runs" what:"app page"` // absolute
	HTML []byte
}

// UICSP is the _meta.ui.csp of an MCP App resource; the JSON names are
// the SEP's.
type UICSP struct {
	Connect  []string `json:"connectDomains,omitempty"`  // fetch, XHR, WebSocket
	Resource []string `json:"resourceDomains,omitempty"` // scripts, styles, images, fonts, media
	Frame    []string `json:"frameDomains,omitempty"`    // nested iframes
	BaseURI  []string `json:"baseUriDomains,omitempty"`  // <base href>
}

// MaxUIPage caps one [plugin.ui] page (package opfile reads it).
const MaxUIPage = 4 << 20

var uiKeys = []string{"tools", "csp_connect", "csp_resources", "csp_frames", "csp_base_uri"}

// ui reads the [plugin.ui] table of spec, whose path or source is known:
// pages are files in the plugin's directory (that of path, source itself,
// or the config's for url and oci). Whether each tool exists is checked
// when the plugin loads (plugins/apps.go).
func (p *configParser) ui(s section, m map[string]any, spec *Spec) *UI {
	v, ok := m["ui"]
	if !ok {
		return nil
	}
	t, isTable := v.(map[string]any)
	if !isTable {
		s.errf("ui", "want a table ([plugin.ui] with tools = { tool = \"page.html\" }), got %s", tomlType(v))
		return nil
	}
	s.unknownSub("ui", t, uiKeys, "want tools, csp_connect, csp_resources, csp_frames or csp_base_uri")
	dir := p.dir
	switch {
	case spec.Path != "":
		dir = filepath.Dir(spec.Path)
	case spec.Source != "":
		dir = spec.Source
	}
	ui := &UI{Tools: map[string]string{}, Pages: map[string]UIPage{}}
	if tools, ok := s.stringMap(t, "tools"); ok {
		names := make([]string, 0, len(tools))
		for k := range tools {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, tool := range names {
			page := tools[tool]
			key := "ui.tools." + tool
			if !filepath.IsLocal(filepath.FromSlash(page)) || strings.ContainsRune(page, '\\') {
				s.errf(key, "page %q: want a file name inside the plugin's directory %s (relative, no \"..\")", page, dir)
				continue
			}
			page = filepath.ToSlash(filepath.Clean(filepath.FromSlash(page)))
			ui.Tools[tool] = page
			if _, done := ui.Pages[page]; done {
				continue
			}
			file := filepath.Join(dir, filepath.FromSlash(page))
			html, err := readPage(dir, page)
			if err != nil {
				s.errf(key, "%v", err)
				delete(ui.Tools, tool)
				continue
			}
			ui.Pages[page] = UIPage{File: file, HTML: html}
		}
	}
	for _, kind := range []struct {
		key string
		dst *[]string
	}{{"csp_connect", &ui.CSP.Connect}, {"csp_resources", &ui.CSP.Resource}, {"csp_frames", &ui.CSP.Frame}, {"csp_base_uri", &ui.CSP.BaseURI}} {
		origins, ok := s.strings(t, kind.key)
		if !ok {
			continue
		}
		for i, o := range origins {
			if err := checkOrigin(o); err != nil {
				s.errf("ui."+kind.key, "element %d %q: %v", i, o, err)
				continue
			}
			*kind.dst = append(*kind.dst, o)
		}
	}
	return ui
}

// unknownSub reports every key of the subtable t (the value of key table)
// that is not in known, in name order; want says what is, when no known
// key is close.
func (s section) unknownSub(table string, t map[string]any, known []string, want string) {
	for _, k := range slices.Sorted(maps.Keys(t)) {
		if slices.Contains(known, k) {
			continue
		}
		if hint := Suggest(k, known); hint != "" {
			s.errf(table+"."+k, "unknown key (did you mean %q?)", hint)
		} else {
			s.errf(table+"."+k, "unknown key (%s)", want)
		}
	}
}

// readPage reads page (slash-separated, local) beneath dir with the one
// reader of operator files: a page that is a link out of dir, or larger
// than MaxUIPage, is an error naming it.
func readPage(dir, page string) ([]byte, error) {
	b, _, err := opfile.ReadIn(dir, page, MaxUIPage)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("page %s does not exist", filepath.Join(dir, filepath.FromSlash(page)))
	}
	if err != nil {
		return nil, fmt.Errorf("page: %w", err)
	}
	return b, nil
}

// checkOrigin accepts what a CSP source list may name of another origin:
// scheme://host[:port], the host possibly starting with "*." (any
// subdomain), and nothing else (no path, no quotes, no spaces or
// semicolons that would end the directive).
func checkOrigin(o string) error {
	if strings.ContainsAny(o, " \t\r\n;,'\"") {
		return fmt.Errorf("an origin has no spaces, quotes, commas or semicolons")
	}
	u, err := url.Parse(o)
	if err != nil {
		return fmt.Errorf("want an origin like \"https://api.example.com\": %w", err)
	}
	switch {
	case u.Scheme != "https" && u.Scheme != "http" && u.Scheme != "wss" && u.Scheme != "ws":
		return fmt.Errorf("want an origin like \"https://api.example.com\" (scheme https, http, wss or ws)")
	case u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("want an origin like \"https://api.example.com\": a scheme and a host, no path")
	case strings.Contains(strings.TrimPrefix(u.Hostname(), "*."), "*"):
		return fmt.Errorf("a wildcard may only start the host (\"*.example.com\")")
	}
	return nil
}
