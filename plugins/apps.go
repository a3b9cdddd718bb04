package plugins

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/plugins/config"
)

// MCP Apps (SEP-1865, the io.modelcontextprotocol/ui extension): a tool
// names an HTML page in _meta.ui.resourceUri, a ui:// resource of MIME
// type AppMIME, which the client renders in a sandboxed iframe. A plugin
// declares its apps in two ways:
//
//   - [plugin.ui] in plugins.toml maps tools to HTML files in the
//     plugin's directory (any kit, any component); mcphost serves each
//     file as ui://<plugin>/<file> and sets the tools' _meta;
//   - a guest lists the resource and the tool's _meta itself (the Go
//     SDK's guest.Tool.UI does both).
//
// Either way the content's _meta.ui.csp is the one [plugin.ui] lists
// (empty: no outside origin), so a plugin cannot widen what its pages
// reach.

const (
	// AppMIME is the MIME type of an MCP App's HTML.
	AppMIME = "text/html;profile=mcp-app"
	// AppExtension is the extension's identifier in capabilities.
	AppExtension = "io.modelcontextprotocol/ui"
)

// AppURI is the URI mcphost serves page of plugin's [plugin.ui] table
// at: ui://<plugin>/<page>, each path segment escaped.
func AppURI(plugin, page string) string {
	segs := strings.Split(page, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return "ui://" + plugin + "/" + strings.Join(segs, "/")
}

// checkApps says which tools of spec's [plugin.ui] table the plugin does
// not list, with a "did you mean" when one is close.
func checkApps(spec *config.Spec, c *core) error {
	if spec.UI == nil {
		return nil
	}
	names := make([]string, len(c.tools))
	for i, t := range c.tools {
		names[i] = t.def.Name
	}
	var errs []error
	for _, tool := range slices.Sorted(maps.Keys(spec.UI.Tools)) {
		if slices.Contains(names, tool) {
			continue
		}
		msg := fmt.Sprintf("[plugin.ui] tools: plugin %q has no tool %q", spec.Name, tool)
		if hint := config.Suggest(tool, names); hint != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", hint)
		} else {
			msg += fmt.Sprintf(" (it lists %s)", strings.Join(names, ", "))
		}
		errs = append(errs, errors.New(msg))
	}
	return errors.Join(errs...)
}

// appMeta is the _meta of an app's resource: its CSP.
func appMeta(ui *config.UI) json.RawMessage {
	var csp config.UICSP
	if ui != nil {
		csp = ui.CSP
	}
	b, _ := json.Marshal(map[string]any{"ui": map[string]any{"csp": csp}})
	return b
}

// addApps gives p the pages of its [plugin.ui] table as resources and
// names each in its tools' _meta.ui.resourceUri.
func addApps(p *Plugin, spec *config.Spec) {
	if spec.UI == nil {
		return
	}
	meta := appMeta(spec.UI)
	p.apps = make(map[string][]byte, len(spec.UI.Pages))
	for _, page := range slices.Sorted(maps.Keys(spec.UI.Pages)) {
		uri := AppURI(p.Name, page)
		html := spec.UI.Pages[page].HTML
		size := int64(len(html))
		def := abi.Resource{URI: uri, Name: page, MimeType: AppMIME, Size: &size, Meta: meta,
			Description: "MCP App of plugin " + p.Name}
		raw, _ := json.Marshal(def)
		p.Resources = append(p.Resources, &Resource{Plugin: p, Def: def, Raw: raw})
		p.apps[uri] = html
	}
	for _, t := range p.Tools {
		page, ok := spec.UI.Tools[t.Original]
		if !ok {
			continue
		}
		t.Def.Meta = withResourceURI(t.Def.Meta, AppURI(p.Name, page))
		t.Raw = setRawMember(t.Raw, "_meta", t.Def.Meta)
	}
}

// appsShadow drops, with a warning, every resource a guest lists (keys,
// kept by keep) at the URI of a [plugin.ui] page of a loaded plugin
// (specs[i] with cores[i] set): the page is served instead.
func appsShadow(log *slog.Logger, specs []*config.Spec, cores []*core, keys []nameReq, keep []bool) {
	owner := map[string]string{}
	for i, s := range specs {
		if cores[i] == nil || s.UI == nil {
			continue
		}
		for page := range s.UI.Pages {
			owner[AppURI(s.Name, page)] = s.Name
		}
	}
	for i, k := range keys {
		if p, ok := owner[k.want]; ok && keep[i] {
			keep[i] = false
			log.Warn("resource not listed: its uri is a [plugin.ui] page, served in its place", "uri", k.want, "plugin", k.plugin, "owner", p)
		}
	}
}

// withResourceURI returns the _meta object meta (maybe empty) with
// ui.resourceUri set to uri, its other members kept.
func withResourceURI(meta json.RawMessage, uri string) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(meta, &m); err != nil || m == nil {
		m = map[string]json.RawMessage{}
	}
	var ui map[string]json.RawMessage
	if err := json.Unmarshal(m["ui"], &ui); err != nil || ui == nil {
		ui = map[string]json.RawMessage{}
	}
	ui["resourceUri"], _ = json.Marshal(uri)
	m["ui"], _ = json.Marshal(ui)
	b, _ := json.Marshal(m)
	return b
}

// readApp serves a page of p's [plugin.ui] table; ok is false for any
// other URI.
func (p *Plugin) readApp(uri string) (json.RawMessage, bool) {
	html, ok := p.apps[uri]
	if !ok {
		return nil, false
	}
	b, _ := json.Marshal(map[string]any{"contents": []any{map[string]any{
		"uri": uri, "mimeType": AppMIME, "text": string(html), "_meta": appMeta(p.Spec.UI),
	}}})
	return b, true
}

// appCSP sets the _meta.ui.csp of every MCP App the guest returned in out
// (a resources/read result) to its [plugin.ui] table's, and says so when
// the guest asked for more.
func (p *Plugin) appCSP(out json.RawMessage) json.RawMessage {
	// Most reads are not apps: look closer only at output that names the
	// profile (in any case) or could spell it with escapes.
	if !bytes.Contains(bytes.ToLower(out), []byte("mcp-app")) && !bytes.Contains(out, []byte(`\u`)) {
		return out
	}
	var res map[string]json.RawMessage
	var items []map[string]json.RawMessage
	if json.Unmarshal(out, &res) != nil || json.Unmarshal(res["contents"], &items) != nil {
		return out
	}
	want := appMeta(p.Spec.UI)
	var wantUI map[string]json.RawMessage
	_ = json.Unmarshal(want, &struct {
		UI *map[string]json.RawMessage `json:"ui"`
	}{&wantUI})
	changed := false
	for _, it := range items {
		var mime string
		if json.Unmarshal(it["mimeType"], &mime) != nil || !strings.EqualFold(strings.ReplaceAll(mime, " ", ""), AppMIME) {
			continue
		}
		var meta, ui map[string]json.RawMessage
		_ = json.Unmarshal(it["_meta"], &meta)
		if meta == nil {
			meta = map[string]json.RawMessage{}
		}
		_ = json.Unmarshal(meta["ui"], &ui)
		if ui == nil {
			ui = map[string]json.RawMessage{}
		}
		if asked := ui["csp"]; asked != nil && !jsonEqual(asked, wantUI["csp"]) && p.core != nil && p.core.log != nil {
			p.core.log.Warn("app served with the csp of [plugin.ui], not the one the plugin asked for: list the origins it needs in csp_connect, csp_resources, csp_frames or csp_base_uri",
				"plugin", p.Name, "asked", string(asked), "served", string(wantUI["csp"]))
		}
		ui["csp"] = wantUI["csp"]
		meta["ui"], _ = json.Marshal(ui)
		it["_meta"], _ = json.Marshal(meta)
		changed = true
	}
	if !changed {
		return out
	}
	res["contents"], _ = json.Marshal(items)
	b, err := json.Marshal(res)
	if err != nil {
		return out
	}
	return b
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// appsUpdated adds to updated the URI of every [plugin.ui] page whose
// HTML differs between a plugin of old and its namesake in new, or that
// only one of them serves.
func appsUpdated(old, new *Generation, updated map[string]bool) {
	for _, q := range new.Plugins {
		p := old.lookup(q.Name)
		if p == nil {
			continue
		}
		for uri, html := range q.apps {
			if old, ok := p.apps[uri]; !ok || !bytes.Equal(old, html) {
				updated[uri] = true
			}
		}
		for uri := range p.apps {
			if _, ok := q.apps[uri]; !ok {
				updated[uri] = true
			}
		}
	}
}
