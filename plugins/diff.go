package plugins

import (
	"bytes"
	"slices"
)

// Diff says what differs from old to new (either may be nil, meaning
// empty).
//
// Tools, Resources and Prompts are true only when that kind's merged list
// changed: an item added, removed, renamed, or its JSON changed in any way
// (a description, a schema). Templates count as resources.
//
// Reloaded names, sorted, the plugins added, removed or replaced: a plugin
// is replaced when its module was loaded anew (new code or new limits). A
// plugin whose module was reused is not reloaded even if its filters or
// names changed; the list flags report that. Updated lists, sorted, the
// resource URIs and template URIs of replaced plugins, old and new, since
// what they return may have changed.
func Diff(old, new *Generation) Changes {
	o, n := orEmpty(old), orEmpty(new)
	c := Changes{
		Tools:   changed(o.Tools, n.Tools, func(t *Tool) []byte { return t.Raw }),
		Prompts: changed(o.Prompts, n.Prompts, func(p *Prompt) []byte { return p.Raw }),
		Resources: changed(o.Resources, n.Resources, func(r *Resource) []byte { return r.Raw }) ||
			changed(o.Templates, n.Templates, func(t *Template) []byte { return t.Raw }),
	}
	updated := map[string]bool{}
	if skillsChanged(o, n, updated) { // skills.go
		c.Resources = true
	}
	note := func(p *Plugin) {
		for _, r := range p.Resources {
			updated[r.Def.URI] = true
		}
		for _, t := range p.Templates {
			updated[t.Def.URITemplate] = true
		}
	}
	for _, p := range o.Plugins {
		q := n.lookup(p.Name)
		switch {
		case q == nil:
			c.Reloaded = append(c.Reloaded, p.Name)
		case q.core.root() != p.core.root(): // re-read lists alone reload nothing
			c.Reloaded = append(c.Reloaded, p.Name)
			note(p)
			note(q)
		}
	}
	for _, q := range n.Plugins {
		if o.lookup(q.Name) == nil {
			c.Reloaded = append(c.Reloaded, q.Name)
		}
	}
	slices.Sort(c.Reloaded)
	appsUpdated(o, n, updated) // apps.go
	for u := range updated {
		c.Updated = append(c.Updated, u)
	}
	slices.Sort(c.Updated)
	return c
}

var emptyGeneration = &Generation{}

func orEmpty(g *Generation) *Generation {
	if g == nil {
		return emptyGeneration
	}
	return g
}

func changed[T any](a, b []T, raw func(T) []byte) bool {
	return !slices.EqualFunc(a, b, func(x, y T) bool { return bytes.Equal(raw(x), raw(y)) })
}
