package host

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mcphost/mcphost/abi/jsonscan"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/host/internal/protocol"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
)

// scope is what one request sees: the whole generation, or, when the
// request carries a top-level "server_id" (the gateway), only that plugin,
// under the plugin's own names — as the plugin would answer as a server of
// its own.
type scope struct {
	g *plugins.Generation // nil when nothing was ever loaded
	p *plugins.Plugin     // nil: the whole generation
	// early: a list answered before the initial load was done, so
	// plugins may be missing from it (startup_progress.go).
	early bool
}

// scope acquires the current generation for req and returns its scope and
// the generation's release func (always to be called). While the initial
// load runs, it waits for it (bounded by the startup wait), or, when found
// is not nil, only until found finds what req asks for among the plugins
// loaded so far: a loaded plugin's tool is called at once, whatever is
// still loading.
func (s *session) scope(ctx context.Context, req *request, found func(scope) bool) (scope, func(), error) {
	stop := s.startupProgress(req)
	seen := s.srv.changeCount.Load() // before the generation is acquired: a mark never claims a newer one
	var g *plugins.Generation
	var release func()
	var ready bool
	if found != nil && !req.routed {
		g, release, ready = s.srv.acquireFound(ctx, func(g *plugins.Generation) bool { return found(scope{g: g}) })
	} else {
		g, release, ready = s.srv.acquire(ctx)
	}
	stop()
	early := !ready && found == nil
	if !ready {
		// Answered before the initial load was done: the session
		// (and, for the stateless era's listeners, the server) hears
		// of the rest of it (changes.go).
		s.early.answered(seen, found == nil, req.method == "resources/read")
		s.srv.early.answered(seen, found == nil, req.method == "resources/read")
	}
	sc := scope{g: g, early: early}
	if !req.routed {
		return sc, release, nil
	}
	if g != nil {
		sc.p = g.Plugin(req.serverID)
	}
	if sc.p == nil {
		return sc, release, &jsonrpc.Error{Code: codeTimeout, Message: fmt.Sprintf("Server '%s' not found", req.serverID)}
	}
	return sc, release, nil
}

// tool finds a tool by its exposed name or, in a plugin scope, by the
// plugin's own name first.
func (sc scope) tool(name string) *plugins.Tool {
	if sc.g == nil {
		return nil
	}
	if sc.p == nil {
		return sc.g.Tool(name)
	}
	if t := sc.p.Tool(name); t != nil {
		return t
	}
	if t := sc.g.Tool(name); t != nil && t.Plugin.Name == sc.p.Name {
		return t
	}
	return nil
}

func (sc scope) prompt(name string) *plugins.Prompt {
	if sc.g == nil {
		return nil
	}
	if sc.p == nil {
		return sc.g.Prompt(name)
	}
	if pr := sc.p.Prompt(name); pr != nil {
		return pr
	}
	if pr := sc.g.Prompt(name); pr != nil && pr.Plugin.Name == sc.p.Name {
		return pr
	}
	return nil
}

// resource finds the plugin serving uri: an exact resource first, then a
// template; vars are the template's variables.
func (sc scope) resource(uri string) (*plugins.Plugin, map[string]string) {
	if sc.g == nil {
		return nil, nil
	}
	if r := sc.g.Resource(uri); r != nil && sc.owns(r.Plugin) {
		return r.Plugin, nil
	}
	if sc.p != nil {
		for _, r := range sc.p.Resources {
			if r.Def.URI == uri {
				return sc.p, nil
			}
		}
	}
	if t, vars := sc.g.MatchTemplate(uri); t != nil && sc.owns(t.Plugin) {
		return t.Plugin, vars
	}
	return nil, nil
}

// didYouMean is the ` (did you mean "x"?)` of an unknown name or URI: the
// closest of those this scope serves, or "" when none is close. It runs on
// the error path only.
func (sc scope) didYouMean(kind, name string) string {
	if sc.g == nil {
		return ""
	}
	var known []string
	for _, p := range sc.g.Plugins {
		if !sc.owns(p) {
			continue
		}
		switch kind {
		case "tool":
			for _, t := range p.Tools {
				known = append(known, sc.toolKey(t))
			}
		case "prompt":
			for _, pr := range p.Prompts {
				known = append(known, sc.promptKey(pr))
			}
		case "resource":
			for _, r := range p.Resources {
				known = append(known, r.Def.URI)
			}
		}
	}
	// A name without its plugin's prefix (greet for ct_greet) first: it
	// is further than two edits from the name meant, and nearer names may
	// be other tools.
	var prefixed []string
	for _, k := range known {
		if kind != "resource" && name != "" && len(k) > len(name)+1 && strings.HasSuffix(k, name) &&
			strings.ContainsRune("_-", rune(k[len(k)-len(name)-1])) && !slices.Contains(prefixed, strconv.Quote(k)) {
			prefixed = append(prefixed, strconv.Quote(k))
		}
	}
	if len(prefixed) > 0 {
		slices.Sort(prefixed)
		return fmt.Sprintf(" (did you mean %s? %ss are named with their plugin's prefix)", strings.Join(prefixed, " or "), kind)
	}
	if hint := config.Suggest(name, known); hint != "" {
		return fmt.Sprintf(" (did you mean %q?)", hint)
	}
	return ""
}

func (sc scope) owns(p *plugins.Plugin) bool { return sc.p == nil || p.Name == sc.p.Name }

// toolKey and the like are the sort and cursor keys of each list.
func (sc scope) toolKey(t *plugins.Tool) string {
	if sc.p != nil {
		return t.Original
	}
	return t.Name
}

func (sc scope) promptKey(p *plugins.Prompt) string {
	if sc.p != nil {
		return p.Def.Name
	}
	return p.Name
}

// list returns the generation's list, or the plugin's own sorted by key,
// without the items the caller may not use (name nil: items are not
// authorized by name).
func list[T any](sc scope, c *Caller, all func(*plugins.Generation) []T, own func(*plugins.Plugin) []T, key, name func(T) string) []T {
	if sc.g == nil {
		return nil
	}
	var items []T
	if sc.p == nil {
		items = all(sc.g)
	} else {
		items = slices.Clone(own(sc.p))
		slices.SortStableFunc(items, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	}
	if c == nil || c.May == nil || name == nil {
		return items
	}
	return slices.DeleteFunc(slices.Clone(items), func(it T) bool { return !c.May(name(it)) })
}

// Cursors are opaque to clients: the base64 of the last item's key, so a
// cursor keeps working across reloads (the next page starts after that key,
// wherever it now is).
const cursorPrefix = "k:"

func encodeCursor(key string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + key))
}

func decodeCursor(c string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(b) < len(cursorPrefix) || string(b[:len(cursorPrefix)]) != cursorPrefix {
		return "", false
	}
	return string(b[len(cursorPrefix):]), true
}

// paginate returns the page after cursor (items sorted by key) and the
// cursor of the next page ("" when this is the last).
func paginate[T any](items []T, key func(T) string, cursor string, size int) ([]T, string, error) {
	start := 0
	if cursor != "" {
		k, ok := decodeCursor(cursor)
		if !ok {
			return nil, "", jsonrpc.InvalidParams("invalid cursor %q", cursor)
		}
		start = sort.Search(len(items), func(i int) bool { return key(items[i]) > k })
	}
	end := min(start+size, len(items))
	if end < len(items) {
		return items[start:end], encodeCursor(key(items[end-1])), nil
	}
	return items[start:end], "", nil
}

// listParams reads the cursor of a list request.
func listParams(req *request) (string, error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if err := decodeParams(req.params, &p); err != nil {
		return "", err
	}
	if p.Cursor == nil {
		return "", nil
	}
	if *p.Cursor == "" {
		return "", jsonrpc.InvalidParams("invalid cursor \"\"")
	}
	return *p.Cursor, nil
}

// appendPage encodes {"<field>":[items…],"nextCursor":…} with each item
// appended by item.
func appendPage[T any](field string, page []T, next string, item func(dst []byte, it T) []byte) []byte {
	dst := make([]byte, 0, 256*len(page)+64)
	dst = append(dst, '{')
	dst = jsonscan.AppendString(dst, field)
	dst = append(dst, ':', '[')
	for i, it := range page {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = item(dst, it)
	}
	dst = append(dst, ']')
	if next != "" {
		dst = append(dst, `,"nextCursor":`...)
		dst = jsonscan.AppendString(dst, next)
	}
	return append(dst, '}')
}

// renamed returns raw with "name" set to name, or raw itself when it
// already has that name.
func renamed(raw []byte, name, current string) []byte {
	if name == current {
		return raw
	}
	return jsonrpc.SetMember(raw, "name", jsonscan.AppendString(nil, name))
}

// listing is one paginated list method: where its items live, their sort
// and cursor key, and how one is written for a client of version v.
type listing[T any] struct {
	member string                        // the result's member: "tools", …
	all    func(*plugins.Generation) []T // the merged list
	own    func(*plugins.Plugin) []T     // one plugin's list, under server_id
	key    func(scope, T) string
	name   func(T) string // the name a Caller is authorized by; nil: none
	write  func(dst []byte, sc scope, it T, v protocol.Version) []byte
}

// serve is the handler of a list method.
func (l listing[T]) serve(ctx context.Context, s *session, req *request) (any, error) {
	cursor, err := listParams(req)
	if err != nil {
		return nil, err
	}
	sc, release, err := s.scope(ctx, req, nil)
	defer release()
	if err != nil {
		return nil, err
	}
	key := func(it T) string { return l.key(sc, it) }
	caller := CallerOf(ctx)
	items := list(sc, caller, l.all, l.own, key, l.name)
	page, next, err := paginate(items, key, cursor, s.srv.opts.PageSize)
	if err != nil {
		return nil, err
	}
	v := req.version()
	body := appendPage(l.member, page, next, func(dst []byte, it T) []byte {
		return l.write(dst, sc, it, v)
	})
	if sc.early {
		body = s.partialList(req, body)
	}
	if req.state != nil && sc.early { // a partial list must not be cached
		req.hints = &cacheHints{ttlMs: 0, scope: "private"}
	} else if req.state != nil { // a 2026-07-28 result: the most conservative hints of its contributors
		req.hints = s.srv.cacheHints(owners(items))
		if caller != nil && caller.May != nil && req.hints != nil {
			req.hints.scope = "private" // this list is the caller's own
		}
	}
	return json.RawMessage(body), nil
}

var (
	listTools = listing[*plugins.Tool]{
		member: "tools",
		all:    func(g *plugins.Generation) []*plugins.Tool { return g.Tools },
		own:    func(p *plugins.Plugin) []*plugins.Tool { return p.Tools },
		key:    scope.toolKey,
		name:   func(t *plugins.Tool) string { return t.Name },
		write: func(dst []byte, sc scope, t *plugins.Tool, v protocol.Version) []byte {
			return protocol.FilterTool(dst, renamed(t.Raw, sc.toolKey(t), t.Name), v)
		},
	}.serve
	listPrompts = listing[*plugins.Prompt]{
		member: "prompts",
		all:    func(g *plugins.Generation) []*plugins.Prompt { return g.Prompts },
		own:    func(p *plugins.Plugin) []*plugins.Prompt { return p.Prompts },
		key:    scope.promptKey,
		name:   func(p *plugins.Prompt) string { return p.Name },
		write: func(dst []byte, sc scope, p *plugins.Prompt, v protocol.Version) []byte {
			return protocol.FilterPrompt(dst, renamed(p.Raw, sc.promptKey(p), p.Name), v)
		},
	}.serve
	listResources = listing[*plugins.Resource]{
		member: "resources",
		all:    func(g *plugins.Generation) []*plugins.Resource { return g.Resources },
		own:    func(p *plugins.Plugin) []*plugins.Resource { return p.Resources },
		key:    func(_ scope, r *plugins.Resource) string { return r.Def.URI },
		write: func(dst []byte, _ scope, r *plugins.Resource, v protocol.Version) []byte {
			return protocol.FilterItem(dst, r.Raw, v)
		},
	}.serve
	listTemplates = listing[*plugins.Template]{
		member: "resourceTemplates",
		all:    func(g *plugins.Generation) []*plugins.Template { return g.Templates },
		own:    func(p *plugins.Plugin) []*plugins.Template { return p.Templates },
		key:    func(_ scope, t *plugins.Template) string { return t.Def.URITemplate },
		name:   func(t *plugins.Template) string { return t.Def.Name },
		write: func(dst []byte, _ scope, t *plugins.Template, v protocol.Version) []byte {
			return protocol.FilterItem(dst, t.Raw, v)
		},
	}.serve
)

// owners returns the plugins that contributed items, each once.
func owners[T any](items []T) []*plugins.Plugin {
	var out []*plugins.Plugin
	for _, it := range items {
		var p *plugins.Plugin
		switch v := any(it).(type) {
		case *plugins.Tool:
			p = v.Plugin
		case *plugins.Prompt:
			p = v.Plugin
		case *plugins.Resource:
			p = v.Plugin
		case *plugins.Template:
			p = v.Plugin
		case *plugins.Skill:
			p = v.Plugin
		}
		if p != nil && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// cacheHints returns the ttlMs and cacheScope of a result served by from:
// each plugin's cache_ttl and cache_scope, or the server's where it sets
// none, and with several plugins the most conservative, the shortest ttl
// and "private" if any is private, since a cached list is stale as soon
// as any part of it is. With no plugin, nil: the server's (see decorate).
func (srv *Server) cacheHints(from []*plugins.Plugin) *cacheHints {
	if len(from) == 0 {
		return nil
	}
	h := &cacheHints{ttlMs: -1, scope: "public"}
	for _, p := range from {
		t := srv.opts.CacheTTL.Milliseconds()
		if p.Spec.CacheTTL != nil {
			t = p.Spec.CacheTTL.Milliseconds()
		}
		if h.ttlMs < 0 || t < h.ttlMs {
			h.ttlMs = t
		}
		if cmp.Or(p.Spec.CacheScope, srv.opts.CacheScope) != "public" {
			h.scope = "private"
		}
	}
	return h
}

// cacheHints are the ttlMs and cacheScope a handler chose for its result.
type cacheHints struct {
	ttlMs int64
	scope string
}

// templateName returns the name of the resource template uri is read
// through, or "" when uri is a listed resource or matches no template.
func (sc scope) templateName(uri string) string {
	if sc.g == nil || sc.g.Resource(uri) != nil {
		return ""
	}
	if t, _ := sc.g.MatchTemplate(uri); t != nil {
		return t.Def.Name
	}
	return ""
}

// templateNamed returns the name of the resource template whose
// uriTemplate is exactly uriTemplate (completion/complete refers to it so).
func (sc scope) templateNamed(uriTemplate string) string {
	if sc.g == nil {
		return ""
	}
	for _, t := range sc.g.Templates {
		if t.Def.URITemplate == uriTemplate {
			return t.Def.Name
		}
	}
	return ""
}

// ResourceTemplateName returns the name of the resource template that a
// resources/read of uri goes through in the current generation, or ""
// (the HTTP transport authorizes reads by it).
func (srv *Server) ResourceTemplateName(uri string) string {
	g, release := srv.reg.Acquire()
	defer release()
	return scope{g: g}.templateName(uri)
}
