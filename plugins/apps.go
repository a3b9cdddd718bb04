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
//
// A plugin's apps are its own. A guest picks its pages' URIs (the SDK's
// default is ui://<tool>/app.html), so two plugins may pick the same one;
// every ui: URI a plugin serves is under ui://<plugin>/ instead
// (ownAppURI), in its resource list and in its tools' _meta alike. A
// guest's ui://palette/app.html in plugin "shades" is served as
// ui://shades/palette/app.html and read from the guest under the URI it
// listed. A ui: URI is routed to the plugin it names and no other, so no
// plugin's page is ever served for another plugin's tool, whatever the
// order of plugins.toml.

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

// appOwner returns the plugin whose namespace uri is in: p for ui://p or
// ui://p/…; isUI is false for a URI of another scheme. A ui: URI spelled
// otherwise (UI://…, ui:x) is no plugin's: owner is "".
func appOwner(uri string) (owner string, isUI bool) {
	if len(uri) < len("ui:") || !strings.EqualFold(uri[:len("ui:")], "ui:") {
		return "", false
	}
	rest, ok := strings.CutPrefix(uri, "ui://")
	if !ok {
		return "", true
	}
	owner, _, _ = strings.Cut(rest, "/")
	return owner, true
}

// ownAppURI returns uri as plugin serves it: a ui: URI outside
// ui://<plugin>/ is moved under it (ui://palette/app.html of plugin shades
// is ui://shades/palette/app.html); any other URI is kept.
func ownAppURI(plugin, uri string) string {
	if owner, isUI := appOwner(uri); !isUI || owner == plugin {
		return uri
	}
	return "ui://" + plugin + "/" + strings.TrimPrefix(uri[len("ui:"):], "//")
}

// claimAppURI is ownAppURI for a resource plugin lists, with a warning
// when the URI lies in the namespace of another plugin of the config
// (isPlugin): that plugin's page stays its own, and the claimant's is
// served under its own name.
func claimAppURI(log *slog.Logger, isPlugin func(string) bool, plugin, uri string) string {
	served := ownAppURI(plugin, uri)
	if owner, _ := appOwner(uri); served != uri && isPlugin(owner) {
		log.Warn("app uri refused: it names another plugin's ui:// namespace; served under this plugin's instead",
			"uri", uri, "plugin", plugin, "owner", owner, "served", served)
	}
	return served
}

// ownApps moves the ui: URIs of p's resources and its tools' _meta (both
// _meta.ui.resourceUri and the older _meta["ui/resourceUri"], which
// clients still read) under p's namespace. It reads the JSON clients get
// (Raw), member names exact, so no spelling a client reads differently
// slips by.
func ownApps(p *Plugin) {
	for _, r := range p.Resources {
		if _, isUI := appOwner(r.Def.URI); !isUI {
			continue
		}
		served := ownAppURI(p.Name, r.Def.URI)
		if served != r.Def.URI {
			if p.appGuest == nil {
				p.appGuest = map[string]string{}
			}
			p.appGuest[served] = r.Def.URI
			r.Def.URI = served
		}
		r.Raw = setMember(r.Raw, "uri", served)
	}
	for _, t := range p.Tools {
		var top map[string]json.RawMessage
		if json.Unmarshal(t.Raw, &top) != nil || top["_meta"] == nil {
			continue
		}
		meta, changed := ownAppMeta(p.Name, top["_meta"])
		if changed {
			t.Def.Meta = meta
			t.Raw = setRawMember(t.Raw, "_meta", meta)
		}
	}
}

// ownAppMeta returns a tool's _meta with the ui: URIs it names moved
// under plugin's namespace, and whether any was.
func ownAppMeta(plugin string, meta json.RawMessage) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil || m == nil {
		return meta, false
	}
	changed := false
	own := func(raw json.RawMessage) json.RawMessage {
		var uri string
		if json.Unmarshal(raw, &uri) != nil {
			return raw
		}
		if served := ownAppURI(plugin, uri); served != uri {
			changed = true
			raw, _ = json.Marshal(served)
		}
		return raw
	}
	if v, ok := m["ui/resourceUri"]; ok {
		m["ui/resourceUri"] = own(v)
	}
	var ui map[string]json.RawMessage
	if json.Unmarshal(m["ui"], &ui) == nil && ui != nil {
		if v, ok := ui["resourceUri"]; ok {
			ui["resourceUri"] = own(v)
			m["ui"], _ = json.Marshal(ui)
		}
	}
	if !changed {
		return meta, false
	}
	b, _ := json.Marshal(m)
	return b, true
}

// ownAppTemplates says which resource templates (keys, by plugin) may be
// listed: a ui: template whose URIs all lie in another plugin's namespace
// (a literal ui://other/…, or a ui: spelling no plugin owns) could never
// be read, so it is left out with a warning. A ui:// template whose
// plugin part is a variable stays; it matches its own plugin's URIs only
// (Generation.MatchTemplate).
func ownAppTemplates(log *slog.Logger, keys []nameReq) []bool {
	keep := make([]bool, len(keys))
	for i, k := range keys {
		keep[i] = true
		owner, isUI := appOwner(k.want)
		if !isUI || owner == k.plugin || strings.HasPrefix(k.want, "ui://") && strings.Contains(owner, "{") {
			continue
		}
		keep[i] = false
		log.Warn("resource template not listed: a plugin serves ui: uris under ui://<its name>/ only", "template", k.want, "plugin", k.plugin,
			"want", "ui://"+k.plugin+"/…")
	}
	return keep
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

// renameContents sets the uri of every item of a resources/read result
// (out) that the guest gave as from to to: a page read under the URI its
// guest listed is answered under the one mcphost serves it at.
func renameContents(out json.RawMessage, from, to string) json.RawMessage {
	var res map[string]json.RawMessage
	var items []map[string]json.RawMessage
	if json.Unmarshal(out, &res) != nil || json.Unmarshal(res["contents"], &items) != nil {
		return out
	}
	for _, it := range items {
		var uri string
		if json.Unmarshal(it["uri"], &uri) == nil && uri == from {
			it["uri"], _ = json.Marshal(to)
		}
	}
	res["contents"], _ = json.Marshal(items)
	b, err := json.Marshal(res)
	if err != nil {
		return out
	}
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
