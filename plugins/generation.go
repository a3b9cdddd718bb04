package plugins

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/source"
)

// assemble names and merges the loaded cores into a generation. cores[i]
// runs specs[i] (nil when it failed); specs[i] is cfg.Plugins[i] unless a
// previous version was kept. dirs[i] are the skills directories read for
// it; nil (or dirs nil) takes those of prev's plugin of the same name.
func (l *Loader) assemble(cfg *config.Config, specs []*config.Spec, cores []*core, dirs []*dirSkills, prev *Generation, id uint64) *Generation {
	type view struct {
		spec   *config.Spec
		core   *core
		tools  []int // indexes into core.tools that pass the filters
		hidden []HiddenTool
		skills skillSet
		dirs   *dirSkills
	}
	var views []view
	var toolReqs, promptReqs, resKeys, tplKeys []nameReq
	isPlugin := func(name string) bool {
		for i := range cfg.Plugins {
			if cfg.Plugins[i].Name == name {
				return true
			}
		}
		return false
	}
	for i, c := range cores {
		if c == nil {
			continue
		}
		v := view{spec: specs[i], core: c}
		prefix := v.spec.Name + "_"
		if v.spec.ToolPrefix != nil {
			prefix = *v.spec.ToolPrefix
		}
		for j, t := range c.tools {
			if f := toolFilter(v.spec, &cfg.Server, &t.def); f != "" {
				v.hidden = append(v.hidden, HiddenTool{Original: t.def.Name, Name: ToolName(prefix, t.def.Name), Filter: f})
				continue
			}
			v.tools = append(v.tools, j)
			toolReqs = append(toolReqs, nameReq{plugin: v.spec.Name, want: ToolName(prefix, t.def.Name)})
		}
		if dirs != nil {
			v.dirs = dirs[i]
		}
		if old := prev.lookup(v.spec.Name); v.dirs == nil && old != nil {
			v.dirs = old.skillDirs
		}
		v.skills = loadSkills(v.spec, c.skills, v.dirs)
		for _, r := range v.skills.refused {
			l.log.Warn("skill refused", "plugin", v.spec.Name, "why", r)
		}
		for _, p := range c.prompts {
			promptReqs = append(promptReqs, nameReq{plugin: v.spec.Name, want: p.def.Name})
		}
		for _, r := range c.resources {
			resKeys = append(resKeys, nameReq{plugin: v.spec.Name, want: claimAppURI(l.log, isPlugin, v.spec.Name, r.def.URI)}) // apps.go
		}
		for _, t := range c.templates {
			tplKeys = append(tplKeys, nameReq{plugin: v.spec.Name, want: t.def.URITemplate})
		}
		views = append(views, v)
	}
	toolNames := assignNames(l.log, "tool", toolReqs, MaxToolName)
	promptNames := assignNames(l.log, "prompt", promptReqs, 0)
	keepRes := firstWins(l.log, "resource", resKeys, nil)
	appsShadow(l.log, specs, cores, resKeys, keepRes) // apps.go
	keepTpl := firstWins(l.log, "template", tplKeys, ownAppTemplates(l.log, tplKeys))

	g := &Generation{ID: id, Config: cfg}
	var ti, pi, ri, tpi int // cursors into the flat name and keep lists
	for _, v := range views {
		c := v.core
		names := toolNames[ti : ti+len(v.tools)]
		prompts := promptNames[pi : pi+len(c.prompts)]
		res := keepRes[ri : ri+len(c.resources)]
		tpls := keepTpl[tpi : tpi+len(c.templates)]
		ti, pi, ri, tpi = ti+len(v.tools), pi+len(c.prompts), ri+len(c.resources), tpi+len(c.templates)

		hash := viewHash(v.spec, c, v.tools, names, prompts, res, tpls, skillsHash(v.skills.skills))
		p := prev.lookup(v.spec.Name)
		if p == nil || p.core != c || p.hash != hash {
			p = newPlugin(v.spec, c, hash, v.tools, names, prompts, res, tpls)
			p.Hidden = v.hidden
			p.setSkills(v.skills, v.dirs)
		}
		g.Plugins = append(g.Plugins, p)
	}
	g.index()
	return g
}

// toolFilter applies read_only (a tool is kept only when its annotations
// say readOnlyHint: true), include_tools and exclude_tools (path.Match
// globs on the plugin's own tool name), and returns the key of the first
// that leaves the tool out, or "" when it is kept.
func toolFilter(spec *config.Spec, server *config.ServerConfig, t *abi.Tool) string {
	switch {
	case spec.ReadOnlyTools(server) && (t.Annotations == nil || t.Annotations.ReadOnlyHint == nil || !*t.Annotations.ReadOnlyHint):
		return "read_only"
	case len(spec.IncludeTools) > 0 && !matchAny(spec.IncludeTools, t.Name):
		return "include_tools"
	case matchAny(spec.ExcludeTools, t.Name):
		return "exclude_tools"
	}
	return ""
}

// Hidden returns the plugin and the filter that hid the tool a client
// calls name (the name it would have been listed under), or nil.
func (g *Generation) Hidden(name string) (*Plugin, *HiddenTool) {
	if g == nil {
		return nil, nil
	}
	for _, p := range g.Plugins {
		if h := p.HiddenTool(name, false); h != nil {
			return p, h
		}
	}
	return nil, nil
}

// HiddenTool returns the filter that hid this plugin's tool name: its
// listed name, or with own its own name; nil when none did.
func (p *Plugin) HiddenTool(name string, own bool) *HiddenTool {
	for i, h := range p.Hidden {
		if h.Name == name || own && h.Original == name {
			return &p.Hidden[i]
		}
	}
	return nil
}

// matchAny reports whether name matches one of the path.Match patterns.
func matchAny(pats []string, name string) bool {
	return slices.ContainsFunc(pats, func(p string) bool { ok, _ := path.Match(p, name); return ok })
}

// viewHash identifies what a generation shows of a core: the spec (except
// its line and native module), the tools kept and every name given.
func viewHash(spec *config.Spec, c *core, tools []int, names, prompts []string, res, tpls []bool, skills string) string {
	s := *spec
	s.Line, s.Native = 0, nil
	b, _ := json.Marshal(struct {
		Spec                config.Spec
		Core                string
		Tools               []int
		Names, Prompts      []string
		Resources, Template []bool
		Skills              string
	}{s, c.hash, tools, names, prompts, res, tpls, skills})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func newPlugin(spec *config.Spec, c *core, hash string, tools []int, names, prompts []string, res, tpls []bool) *Plugin {
	p := &Plugin{Name: spec.Name, ABI: c.abi, GuestVersion: c.guestVersion, Spec: *spec, Runtime: c.runtime, core: c, hash: hash,
		tools: map[string]*Tool{}, prompts: map[string]*Prompt{}}
	for k, j := range tools {
		lt := c.tools[j]
		t := &Tool{Name: names[k], Original: lt.def.Name, Plugin: p, Def: lt.def, Raw: lt.raw, in: lt.in, out: lt.out, index: lt.index, flat: lt.flat, outFlat: lt.outFlat}
		if t.Name != t.Original {
			t.Raw = setMember(lt.raw, "name", t.Name)
		}
		if t.Def.Execution == nil && matchAny(spec.TaskTools, t.Original) {
			t.Def.Execution = &abi.ToolExecution{TaskSupport: abi.TaskOptional}
			raw := bytes.TrimRight(t.Raw, " \t\r\n")
			t.Raw = append(append(raw[:len(raw)-1:len(raw)-1], `,"execution":{"taskSupport":"optional"}`...), '}')
		}
		p.Tools = append(p.Tools, t)
		p.tools[t.Original] = t
	}
	for k, lp := range c.prompts {
		pr := &Prompt{Name: prompts[k], Plugin: p, Def: lp.def, Raw: lp.raw}
		if pr.Name != lp.def.Name {
			pr.Raw = setMember(lp.raw, "name", pr.Name)
		}
		p.Prompts = append(p.Prompts, pr)
		p.prompts[lp.def.Name] = pr
	}
	for k, lr := range c.resources {
		if res[k] {
			p.Resources = append(p.Resources, &Resource{Plugin: p, Def: lr.def, Raw: lr.raw})
		}
	}
	for k, lt := range c.templates {
		if tpls[k] {
			p.Templates = append(p.Templates, &Template{Plugin: p, Def: lt.def, Raw: lt.raw, tpl: lt.tpl})
		}
	}
	ownApps(p)       // apps.go
	addApps(p, spec) // apps.go
	return p
}

// setMember returns the JSON object raw with member key set to the string
// v, keeping every other member, and the order, as they are.
func setMember(raw json.RawMessage, key, v string) json.RawMessage {
	val, _ := json.Marshal(v)
	return setRawMember(raw, key, val)
}

// setRawMember is setMember with the JSON value val.
func setRawMember(raw json.RawMessage, key string, val json.RawMessage) json.RawMessage {
	d := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := d.Token(); err != nil || tok != json.Delim('{') {
		return raw
	}
	var b bytes.Buffer
	b.WriteByte('{')
	found := false
	for d.More() {
		tok, err := d.Token()
		if err != nil {
			return raw
		}
		k, _ := tok.(string)
		var m json.RawMessage
		if err := d.Decode(&m); err != nil {
			return raw
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		if k == key {
			b.Write(val)
			found = true
		} else {
			b.Write(m)
		}
	}
	if _, err := d.Token(); err != nil && !errors.Is(err, io.EOF) {
		return raw
	}
	if !found {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(key)
		b.Write(kb)
		b.WriteByte(':')
		b.Write(val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// index merges the plugins' lists, sorted, and builds the lookups.
func (g *Generation) index() {
	g.plugins = make(map[string]*Plugin, len(g.Plugins))
	g.tools = map[string]*Tool{}
	g.prompts = map[string]*Prompt{}
	g.resources = map[string]*Resource{}
	for _, p := range g.Plugins {
		g.plugins[p.Name] = p
		g.Tools = append(g.Tools, p.Tools...)
		g.Resources = append(g.Resources, p.Resources...)
		g.Templates = append(g.Templates, p.Templates...)
		g.Prompts = append(g.Prompts, p.Prompts...)
		g.Skills = append(g.Skills, p.Skills...)
	}
	slices.SortFunc(g.Tools, func(a, b *Tool) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(g.Prompts, func(a, b *Prompt) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(g.Resources, func(a, b *Resource) int { return strings.Compare(a.Def.URI, b.Def.URI) })
	slices.SortFunc(g.Templates, func(a, b *Template) int {
		return strings.Compare(a.Def.URITemplate, b.Def.URITemplate)
	})
	for _, t := range g.Tools {
		g.tools[t.Name] = t
	}
	for _, p := range g.Prompts {
		g.prompts[p.Name] = p
	}
	for _, r := range g.Resources {
		g.resources[r.Def.URI] = r
	}
	g.indexSkills()
}

func (g *Generation) lookup(name string) *Plugin {
	if g == nil {
		return nil
	}
	return g.plugins[name]
}

// Plugin returns the loaded plugin called name, or nil.
func (g *Generation) Plugin(name string) *Plugin { return g.lookup(name) }

// Tool returns the tool exposed as name, or nil.
func (g *Generation) Tool(name string) *Tool {
	if g == nil {
		return nil
	}
	return g.tools[name]
}

// Prompt returns the prompt exposed as name, or nil.
func (g *Generation) Prompt(name string) *Prompt {
	if g == nil {
		return nil
	}
	return g.prompts[name]
}

// Resource returns the listed resource with exactly this URI, or nil.
func (g *Generation) Resource(uri string) *Resource {
	if g == nil {
		return nil
	}
	return g.resources[uri]
}

// MatchTemplate returns the resource template that uri expands, and its
// variables; nil when none does. When several match, the one with the most
// literal characters (the most specific) wins, then the first in order. A
// ui: URI matches only the templates of the plugin it names.
// Look for an exact [Generation.Resource] first.
func (g *Generation) MatchTemplate(uri string) (*Template, map[string]string) {
	if g == nil {
		return nil, nil
	}
	var best *Template
	var bestVars map[string]string
	owner, isUI := appOwner(uri) // a ui: URI is its plugin's alone (apps.go)
	for _, t := range g.Templates {
		if t.tpl == nil || best != nil && t.tpl.lits <= best.tpl.lits || isUI && t.Plugin.Name != owner {
			continue
		}
		if vars, ok := t.tpl.match(uri); ok {
			best, bestVars = t, vars
		}
	}
	return best, bestVars
}

// Close releases the generation's plugins; a plugin's module is closed
// when the last generation holding it is closed. Close is idempotent. Calls
// still running on the generation must finish first (a [Registry] sees to
// that).
func (g *Generation) Close(ctx context.Context) error {
	if g == nil {
		return nil
	}
	var errs []error
	g.closeOnce.Do(func() {
		for _, p := range g.Plugins {
			if err := p.core.release(ctx); err != nil {
				errs = append(errs, err)
			}
		}
	})
	return errors.Join(errs...)
}

// Tool returns this plugin's tool by the plugin's own name for it, or nil
// (also when include_tools or exclude_tools left it out).
func (p *Plugin) Tool(original string) *Tool { return p.tools[original] }

// Warnings returns the faults found in what the plugin listed that did not
// keep an item out: a tool schema that is not valid JSON Schema, served as
// declared without validation (see ServerConfig.StrictSchemas).
func (p *Plugin) Warnings() []string {
	return append(slices.Clone(p.core.warnings), p.skillWarnings...)
}

// UnprovidedImports returns what a component imports that this host does
// not provide ("interface#function"): the plugin loads, but a call that
// reaches one of them traps, so `mcphost validate` fails on it. Empty for
// a core module, and for a plugin listed from the list cache before its
// module loads.
func (p *Plugin) UnprovidedImports() []string { return slices.Clone(p.core.unprovided) }

// Signer returns who signed the plugin's code, verified against its
// [plugin.signature] table when it was fetched, or nil without one.
func (p *Plugin) Signer() *source.Signer { return p.core.signer }

// Digest returns the SHA-256 (hex) of the code the plugin runs, as it was
// read when the plugin loaded (and checked against its sha256 pin, if
// any); "" for an in-process Native module, which has no code of its own.
// With Signer, it names exactly what answers the plugin's calls (the
// audit log records both).
func (p *Plugin) Digest() string { return p.core.sum }

// Prompt returns this plugin's prompt by the plugin's own name for it, or nil.
func (p *Plugin) Prompt(name string) *Prompt { return p.prompts[name] }

// Failed returns the failure recorded for the plugin called name, or nil.
func (g *Generation) Failed(name string) error {
	if g == nil {
		return nil
	}
	for _, f := range g.Failures {
		if f.Plugin == name {
			return f.Err
		}
	}
	return nil
}
