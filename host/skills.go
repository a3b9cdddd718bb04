package host

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"unicode/utf8"

	"github.com/mcphost/mcphost/abi/jsonscan"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/host/internal/protocol"
	"github.com/mcphost/mcphost/host/internal/tasks"
	"github.com/mcphost/mcphost/plugins"
)

// The Skills extension (SEP-2640, io.modelcontextprotocol/skills), in
// both eras: skills/list, skills/get, resources/directory/read, and
// resources/read of skill files (from readResource). The skills and their
// files come from the generation (plugins/skills.go): mcphost computed
// their digests and sizes when the plugin loaded, and serves the very
// bytes it hashed. A change of a plugin's skills on reload changes the
// resources list (each SKILL.md is listed), so clients hear
// notifications/resources/list_changed; SEP-2640 defines no notification
// of its own.

// extSkills is the extension's identifier.
const extSkills = "io.modelcontextprotocol/skills"

// skillsCapability is the extension's settings: mcphost implements the
// optional resources/directory/read.
var skillsCapability = map[string]bool{"directoryRead": true}

// serverExtensions are the extensions mcphost declares under
// capabilities.extensions.
func serverExtensions() map[string]any {
	return map[string]any{tasks.Extension: struct{}{}, extSkills: skillsCapability, extApps: appsCapability()}
}

var listSkills = listing[*plugins.Skill]{
	member: "skills",
	all:    func(g *plugins.Generation) []*plugins.Skill { return g.Skills },
	own:    func(p *plugins.Plugin) []*plugins.Skill { return p.Skills },
	key:    func(_ scope, s *plugins.Skill) string { return s.URI },
	write: func(dst []byte, _ scope, s *plugins.Skill, _ protocol.Version) []byte {
		return append(dst, s.Entry...)
	},
}.serve

// skill finds the skill whose SKILL.md is at uri in this scope.
func (sc scope) skill(uri string) *plugins.Skill {
	if s := sc.g.Skill(uri); s != nil && sc.owns(s.Plugin) {
		return s
	}
	return nil
}

// skillFile finds the skill file at uri in this scope.
func (sc scope) skillFile(uri string) *plugins.SkillFile {
	if f := sc.g.SkillFile(uri); f != nil && sc.owns(f.Skill.Plugin) {
		return f
	}
	return nil
}

// getSkill serves skills/get: the entry of one skill, by the URI of its
// SKILL.md; any other URI is -32602, as SEP-2640 says.
func getSkill(ctx context.Context, s *session, req *request) (any, error) {
	var p uriParams
	uri, err := p.decode(req)
	if err != nil {
		return nil, err
	}
	sc, release, err := s.scope(ctx, req, func(sc scope) bool { return sc.skill(uri) != nil })
	defer release()
	if err != nil {
		return nil, err
	}
	sk := sc.skill(uri)
	if sk == nil {
		return nil, jsonrpc.InvalidParams("No skill is served at %s: skills/get wants the uri of a SKILL.md that skills/list lists", uri)
	}
	req.served = sk.Plugin
	if req.state != nil {
		req.hints = s.srv.cacheHints([]*plugins.Plugin{sk.Plugin})
	}
	out := append(append([]byte(`{"skill":`), sk.Entry...), '}')
	return json.RawMessage(out), nil
}

// readSkillFile answers resources/read of a skill file with the bytes
// its digest covers: text when they are UTF-8, a base64 blob otherwise.
func readSkillFile(s *session, req *request, f *plugins.SkillFile) (any, error) {
	req.served = f.Skill.Plugin
	if req.state != nil {
		req.hints = s.srv.cacheHints([]*plugins.Plugin{f.Skill.Plugin})
	}
	b := make([]byte, 0, len(f.Data)+len(f.URI)+64)
	b = append(b, `{"contents":[{"uri":`...)
	b = jsonscan.AppendString(b, f.URI)
	b = append(b, `,"mimeType":`...)
	b = jsonscan.AppendString(b, f.MIMEType)
	if utf8.Valid(f.Data) {
		b = append(b, `,"text":`...)
		b = jsonscan.AppendString(b, string(f.Data))
	} else {
		b = append(b, `,"blob":"`...)
		b = base64.StdEncoding.AppendEncode(b, f.Data)
		b = append(b, '"')
	}
	return json.RawMessage(append(b, `}]}`...)), nil
}

// readDirectory serves resources/directory/read on the directories of
// the skill namespaces: skill://<plugin>, every skill root and every
// directory within one. Anything else is -32602.
func readDirectory(ctx context.Context, s *session, req *request) (any, error) {
	var p struct {
		URI    *string `json:"uri"`
		Cursor *string `json:"cursor"`
	}
	if err := decodeParams(req.params, &p); err != nil {
		return nil, err
	}
	if p.URI == nil {
		return nil, jsonrpc.InvalidParams("invalid params: missing uri")
	}
	uri := *p.URI
	sc, release, err := s.scope(ctx, req, nil)
	defer release()
	if err != nil {
		return nil, err
	}
	all, ok := sc.g.SkillDir(uri)
	var children []plugins.DirEntry
	for _, c := range all {
		if sc.owns(c.Plugin) {
			children = append(children, c)
		}
	}
	if !ok || len(children) == 0 {
		return nil, jsonrpc.InvalidParams("%s is not a directory resource: resources/directory/read wants a skill directory, such as a SKILL.md's uri without /SKILL.md", uri)
	}
	cursor := ""
	if p.Cursor != nil {
		cursor = *p.Cursor
	}
	key := func(c plugins.DirEntry) string { return c.URI }
	page, next, err := paginate(children, key, cursor, s.srv.opts.PageSize)
	if err != nil {
		return nil, err
	}
	body := appendPage("resources", page, next, func(dst []byte, c plugins.DirEntry) []byte {
		dst = append(dst, `{"uri":`...)
		dst = jsonscan.AppendString(dst, c.URI)
		dst = append(dst, `,"name":`...)
		dst = jsonscan.AppendString(dst, c.Name)
		dst = append(dst, `,"mimeType":`...)
		dst = jsonscan.AppendString(dst, c.MIMEType)
		return append(dst, '}')
	})
	return json.RawMessage(body), nil
}
