package plugins

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sandbox"
)

// versioner is implemented by modules that can call a plain i32 export
// (*sandbox.Module does), used for mcphost_abi_version.
type versioner interface {
	CallI32(ctx context.Context, export string) (int32, error)
}

// listEntry is what a plugin listed when it loaded: the raw items of each
// list, as the guest returned them. It is what inspect returns, and the
// entry the list cache keeps (listcache.go, which sets Format).
type listEntry struct {
	Format       int `json:"format"`
	ABI          int `json:"abi"`
	GuestVersion int `json:"guestVersion,omitempty"`
	sandbox.Lists
}

// equal reports whether e and o list the same items.
func (e *listEntry) equal(o *listEntry) bool {
	same := func(a, b []json.RawMessage) bool {
		return slices.EqualFunc(a, b, func(x, y json.RawMessage) bool { return bytes.Equal(compact(x), compact(y)) })
	}
	return e.ABI == o.ABI && e.GuestVersion == o.GuestVersion && same(e.Tools, o.Tools) &&
		same(e.Resources, o.Resources) && same(e.Templates, o.Templates) && same(e.Prompts, o.Prompts) &&
		same(e.Skills, o.Skills)
}

// inspect makes c's guest (which detects its ABI) and reads its lists. A list export that fails or
// returns something that is not a list makes the whole plugin fail;
// malformed items are skipped with a warning.
func (l *Loader) inspect(ctx context.Context, c *core) (*listEntry, error) {
	m := c.module
	g, err := sandbox.NewGuest(m, c.name)
	if err != nil {
		return nil, err
	}
	c.guest, c.abi = g, g.ABI()
	if vm, ok := m.(versioner); ok && m.HasExport(abi.ExportABIVersion) {
		n, err := vm.CallI32(ctx, abi.ExportABIVersion)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", abi.ExportABIVersion, err)
		}
		c.guestVersion = int(n)
		if n > abi.Version {
			l.log.Warn("plugin reports a newer ABI version", "plugin", c.name, "version", n, "host", abi.Version)
		}
	}
	return l.readLists(ctx, c)
}

// readLists calls c's list exports and keeps what they return in c; it
// returns the raw items too, for the list cache.
func (l *Loader) readLists(ctx context.Context, c *core) (*listEntry, error) {
	ls, err := c.guest.Lists(ctx)
	if err != nil {
		return nil, err
	}
	e := &listEntry{ABI: c.abi, GuestVersion: c.guestVersion, Lists: *ls}
	l.useLists(c, e)
	return e, nil
}

// useLists fills c's lists from e.
func (l *Loader) useLists(c *core, e *listEntry) {
	c.tools = l.readTools(c, e.Tools)
	c.resources = l.readResources(c.name, e.Resources)
	c.templates = l.readTemplates(c.name, e.Templates)
	c.prompts = l.readPrompts(c.name, e.Prompts)
	c.skills = l.readSkillFiles(c.name, e.Skills)
}

func compact(raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}

// nameOf digs the "name" out of an item that did not decode, for logs.
func nameOf(raw json.RawMessage) string {
	var v struct {
		Name any `json:"name"`
	}
	_ = json.Unmarshal(raw, &v)
	if s, ok := v.Name.(string); ok {
		return s
	}
	return ""
}

func (l *Loader) skip(plugin, kind string, index int, name string, err error) {
	l.log.Warn(kind+" skipped", "plugin", plugin, kind, name, "index", index, "err", err)
}

// readTools reads a tools list. A tool whose inputSchema or outputSchema
// is not an object schema is skipped (clients would reject the whole list
// over it); one whose schema does not compile as JSON Schema is skipped
// when c.strict is set, and otherwise listed
// exactly as declared, without that validation, and one warning naming the
// fault is logged and kept in c.warnings (see [Plugin.Warnings]).
func (l *Loader) readTools(c *core, raws []json.RawMessage) []listedTool {
	plugin := c.name
	var out []listedTool
	seen := map[string]bool{}
	for i, raw := range raws {
		t := listedTool{index: i}
		if err := json.Unmarshal(raw, &t.def); err != nil {
			l.skip(plugin, "tool", i, nameOf(raw), fmt.Errorf("invalid tool: %w", err))
			continue
		}
		name := t.def.Name
		var err error
		switch {
		case name == "":
			err = fmt.Errorf("missing name")
		case seen[name]:
			err = fmt.Errorf("listed twice")
		case len(bytes.TrimSpace(t.def.InputSchema)) == 0:
			err = fmt.Errorf("missing inputSchema")
		}
		if err != nil {
			l.skip(plugin, "tool", i, name, err)
			continue
		}
		var faults []error
		if t.in, err = compileSchema(plugin, name, "inputSchema", t.def.InputSchema); err != nil {
			faults = append(faults, err)
		} else if doc, err := decodeJSON(t.def.InputSchema); err == nil {
			t.flat = compileFlat(doc)
		}
		if o := bytes.TrimSpace(t.def.OutputSchema); len(o) > 0 && !bytes.Equal(o, []byte("null")) {
			if t.out, err = compileSchema(plugin, name, "outputSchema", t.def.OutputSchema); err != nil {
				faults = append(faults, err)
			} else if doc, err := decodeJSON(t.def.OutputSchema); err == nil {
				t.outFlat = compileFlat(doc)
			}
		}
		if len(faults) > 0 {
			err := errors.Join(faults...)
			var shape *shapeError
			if c.strict || errors.As(err, &shape) {
				l.skip(plugin, "tool", i, name, err)
				continue
			}
			msg := fmt.Sprintf("tool %q: schema not valid, served as declared without validation: %s",
				name, strings.ReplaceAll(err.Error(), "\n", "; "))
			l.log.Warn("tool schema not valid; served as declared without validation",
				"plugin", plugin, "tool", name, "err", err)
			c.warnings = append(c.warnings, msg)
		}
		seen[name] = true
		t.raw = compact(raw)
		out = append(out, t)
	}
	return out
}

func (l *Loader) readResources(plugin string, raws []json.RawMessage) []listedResource {
	var out []listedResource
	seen := map[string]bool{}
	for i, raw := range raws {
		var r listedResource
		err := json.Unmarshal(raw, &r.def)
		switch {
		case err != nil:
			err = fmt.Errorf("invalid resource: %w", err)
		case r.def.URI == "":
			err = fmt.Errorf("missing uri")
		case r.def.Name == "":
			err = fmt.Errorf("missing name")
		case seen[r.def.URI]:
			err = fmt.Errorf("listed twice")
		}
		if err != nil {
			l.skip(plugin, "resource", i, r.def.URI, err)
			continue
		}
		seen[r.def.URI] = true
		r.raw = compact(raw)
		out = append(out, r)
	}
	return out
}

func (l *Loader) readTemplates(plugin string, raws []json.RawMessage) []listedTemplate {
	var out []listedTemplate
	seen := map[string]bool{}
	for i, raw := range raws {
		var t listedTemplate
		err := json.Unmarshal(raw, &t.def)
		switch {
		case err != nil:
			err = fmt.Errorf("invalid resource template: %w", err)
		case t.def.URITemplate == "":
			err = fmt.Errorf("missing uriTemplate")
		case t.def.Name == "":
			err = fmt.Errorf("missing name")
		case seen[t.def.URITemplate]:
			err = fmt.Errorf("listed twice")
		}
		if err != nil {
			l.skip(plugin, "template", i, t.def.URITemplate, err)
			continue
		}
		seen[t.def.URITemplate] = true
		if t.tpl, err = parseURITemplate(t.def.URITemplate); err != nil {
			// Still listed, so clients see it, but reads cannot be routed
			// to it by matching.
			l.log.Warn("template cannot be matched", "plugin", plugin, "template", t.def.URITemplate, "err", err)
		}
		t.raw = compact(raw)
		out = append(out, t)
	}
	return out
}

func (l *Loader) readPrompts(plugin string, raws []json.RawMessage) []listedPrompt {
	var out []listedPrompt
	seen := map[string]bool{}
	for i, raw := range raws {
		var p listedPrompt
		err := json.Unmarshal(raw, &p.def)
		switch {
		case err != nil:
			err = fmt.Errorf("invalid prompt: %w", err)
		case p.def.Name == "":
			err = fmt.Errorf("missing name")
		case seen[p.def.Name]:
			err = fmt.Errorf("listed twice")
		case slices.ContainsFunc(p.def.Arguments, func(a abi.PromptArgument) bool { return a.Name == "" }):
			err = fmt.Errorf("an argument has no name")
		}
		if err != nil {
			l.skip(plugin, "prompt", i, cmp.Or(p.def.Name, nameOf(raw)), err)
			continue
		}
		seen[p.def.Name] = true
		p.raw = compact(raw)
		out = append(out, p)
	}
	return out
}

// readSkillFiles reads the items of mcphost_list_skills; a malformed
// one is skipped with a warning, as other list items are.
func (l *Loader) readSkillFiles(plugin string, raws []json.RawMessage) []abi.SkillFile {
	var out []abi.SkillFile
	seen := map[string]bool{}
	for i, raw := range raws {
		var f abi.SkillFile
		err := json.Unmarshal(raw, &f)
		switch {
		case err != nil:
			err = fmt.Errorf("invalid skill file: %w", err)
		case f.Path == "" || path.IsAbs(f.Path) || !fs.ValidPath(f.Path):
			err = fmt.Errorf("path %q is not a relative slash path without . or .. elements", f.Path)
		case seen[f.Path]:
			err = errors.New("listed twice")
		}
		if err != nil {
			l.skip(plugin, "skill file", i, f.Path, err)
			continue
		}
		seen[f.Path] = true
		out = append(out, f)
	}
	return out
}
