package host

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"sort"

	"github.com/mcphost/mcphost/plugins"
)

// scope is what one request sees: the whole generation, or, when the
// request carries a top-level "server_id" (the gateway), only that plugin,
// under the plugin's own names — as the plugin would answer as a server of
// its own.
type scope struct {
	g *plugins.Generation // nil when nothing was ever loaded
	p *plugins.Plugin     // nil: the whole generation
}

// scope acquires the current generation for req and returns its scope and
// the generation's release func (always to be called).
func (s *session) scope(ctx context.Context, req *request) (scope, func(), error) {
	g, release := s.srv.acquire(ctx)
	sc := scope{g: g}
	if !req.routed {
		return sc, release, nil
	}
	if g != nil {
		sc.p = g.Plugin(req.serverID)
	}
	if sc.p == nil {
		return sc, release, &rpcError{Code: codeTimeout, Message: fmt.Sprintf("Server '%s' not found", req.serverID)}
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

func resourceKey(r *plugins.Resource) string { return r.Def.URI }
func templateKey(t *plugins.Template) string { return t.Def.URITemplate }

// list returns the generation's list, or the plugin's own sorted by key.
func list[T any](sc scope, all func(*plugins.Generation) []T, own func(*plugins.Plugin) []T, key func(T) string) []T {
	if sc.g == nil {
		return nil
	}
	if sc.p == nil {
		return all(sc.g)
	}
	items := slices.Clone(own(sc.p))
	slices.SortStableFunc(items, func(a, b T) int { return cmp.Compare(key(a), key(b)) })
	return items
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
			return nil, "", invalidParams("invalid cursor %q", cursor)
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
		return "", invalidParams("invalid cursor \"\"")
	}
	return *p.Cursor, nil
}

// appendPage encodes {"<field>":[items…],"nextCursor":…} with each item
// appended by item.
func appendPage[T any](field string, page []T, next string, item func(dst []byte, it T) []byte) []byte {
	dst := make([]byte, 0, 256*len(page)+64)
	dst = append(dst, '{')
	dst = appendString(dst, field)
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
		dst = appendString(dst, next)
	}
	return append(dst, '}')
}

// renamed returns raw with "name" set to name, or raw itself when it
// already has that name.
func renamed(raw []byte, name, current string) []byte {
	if name == current {
		return raw
	}
	return setMember(raw, "name", appendString(nil, name))
}
