package host

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
)

const skillMD = "---\nname: greeting\ndescription: Greet people well\nmetadata:\n  v: \"1\"\n---\n# Greeting\n"

// skillsServer serves one plugin whose guest ships the skill "greeting"
// (SKILL.md, notes/TIPS.md and a binary file) and one plain resource.
func skillsServer(t *testing.T) *Server {
	t.Helper()
	files, _ := json.Marshal(abi.ListSkillsResult{Files: []abi.SkillFile{
		{Path: "greeting/SKILL.md", Data: []byte(skillMD)},
		{Path: "greeting/notes/TIPS.md", Data: []byte("be kind\n")},
		{Path: "greeting/wave.bin", Data: []byte{0xff, 0xfe, 0}},
	}})
	ex := map[string]func(context.Context, []byte) ([]byte, error){
		abi.ExportListTools: func(context.Context, []byte) ([]byte, error) { return []byte(`{"tools":[]}`), nil },
		abi.ExportListResources: func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"resources":[{"uri":"mem://plain","name":"plain"}]}`), nil
		},
		abi.ExportListSkills: func(context.Context, []byte) ([]byte, error) { return files, nil },
	}
	reg := plugins.NewRegistry()
	reg.Swap(context.Background(), buildGeneration(t, config.Spec{Name: "p", Native: plugins.NativeModule(ex)}))
	t.Cleanup(func() { reg.Close(context.Background()) })
	srv := New(reg, Options{Logger: quietLog})
	t.Cleanup(func() { srv.Close() })
	return srv
}

func sha(b string) string {
	s := sha256.Sum256([]byte(b))
	return "sha256:" + hex.EncodeToString(s[:])
}

// TestSkillsEras serves the Skills extension to a 2025-11-25 client (the
// capability in initialize) and a 2026-07-28 one (in server/discover, with
// caching hints on skills/list and skills/get).
func TestSkillsEras(t *testing.T) {
	wantEntry := map[string]any{
		"uri":         "skill://p/greeting/SKILL.md",
		"frontmatter": map[string]any{"name": "greeting", "description": "Greet people well", "metadata": map[string]any{"v": "1"}},
		"resources": []any{
			map[string]any{"uri": "skill://p/greeting/SKILL.md", "digest": sha(skillMD), "size": float64(len(skillMD))},
			map[string]any{"uri": "skill://p/greeting/notes/TIPS.md", "digest": sha("be kind\n"), "size": float64(8)},
			map[string]any{"uri": "skill://p/greeting/wave.bin", "digest": sha("\xff\xfe\x00"), "size": float64(3)},
		},
	}
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			c := startClient(t, skillsServer(t))
			params := func(p string) string { return p } // 2025: the params as they are
			if era == "2025-11-25" {
				c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			} else {
				params = func(p string) string {
					if p == "" {
						return meta2026(`{}`)
					}
					return p + "," + meta2026(`{}`)
				}
				c.send(`{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{%s}}`, params(""))
			}
			var caps struct {
				Capabilities struct {
					Resources  map[string]any            `json:"resources"`
					Extensions map[string]map[string]any `json:"extensions"`
				} `json:"capabilities"`
			}
			if w := c.next(); json.Unmarshal(w.Result, &caps) != nil || caps.Capabilities.Resources == nil ||
				caps.Capabilities.Extensions["io.modelcontextprotocol/skills"]["directoryRead"] != true {
				t.Fatalf("capabilities: %s; want resources and the skills extension with directoryRead", w.raw)
			}
			if era == "2025-11-25" {
				c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			}
			call := func(method, p string) wire {
				t.Helper()
				c.send(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{%s}}`, method, params(p))
				return c.next()
			}

			var list struct {
				Skills     []map[string]any `json:"skills"`
				NextCursor *string          `json:"nextCursor"`
				TTLMs      *int64           `json:"ttlMs"`
			}
			w := call("skills/list", "")
			if err := json.Unmarshal(w.Result, &list); err != nil || len(list.Skills) != 1 || !reflect.DeepEqual(list.Skills[0], wantEntry) {
				t.Fatalf("skills/list = %s; want the one entry %v", w.raw, wantEntry)
			}
			if (list.TTLMs != nil) != (era == "2026-07-28") {
				t.Errorf("skills/list ttlMs in %s: %s", era, w.raw)
			}
			var get struct {
				Skill map[string]any `json:"skill"`
			}
			w = call("skills/get", `"uri":"skill://p/greeting/SKILL.md"`)
			if err := json.Unmarshal(w.Result, &get); err != nil || !reflect.DeepEqual(get.Skill, wantEntry) {
				t.Errorf("skills/get = %s; want the entry", w.raw)
			}
			for _, uri := range []string{"skill://p/greeting/notes/TIPS.md", "skill://p/nothing/SKILL.md", "mem://plain"} {
				if w := call("skills/get", `"uri":"`+uri+`"`); w.Error == nil || w.Error.Code != -32602 {
					t.Errorf("skills/get %s = %s; want -32602", uri, w.raw)
				}
			}

			var read struct {
				Contents []struct{ URI, MimeType, Text, Blob string } `json:"contents"`
			}
			w = call("resources/read", `"uri":"skill://p/greeting/SKILL.md"`)
			if err := json.Unmarshal(w.Result, &read); err != nil || len(read.Contents) != 1 || read.Contents[0].Text != skillMD ||
				read.Contents[0].MimeType != "text/markdown" {
				t.Errorf("resources/read SKILL.md = %s", w.raw)
			}
			w = call("resources/read", `"uri":"skill://p/greeting/wave.bin"`)
			if err := json.Unmarshal(w.Result, &read); err != nil || len(read.Contents) != 1 ||
				read.Contents[0].Blob != base64.StdEncoding.EncodeToString([]byte{0xff, 0xfe, 0}) {
				t.Errorf("resources/read wave.bin = %s; want its bytes as a blob", w.raw)
			}

			var res struct {
				Resources []map[string]any `json:"resources"`
			}
			w = call("resources/list", "")
			want := []map[string]any{
				{"uri": "mem://plain", "name": "plain"},
				{"uri": "skill://p/greeting/SKILL.md", "name": "greeting", "description": "Greet people well", "mimeType": "text/markdown"},
			}
			if err := json.Unmarshal(w.Result, &res); err != nil || !reflect.DeepEqual(res.Resources, want) {
				t.Errorf("resources/list = %s; want %v", w.raw, want)
			}

			for _, tt := range []struct {
				uri  string
				want []map[string]any
			}{
				{"skill://p/greeting", []map[string]any{
					{"uri": "skill://p/greeting/SKILL.md", "name": "SKILL.md", "mimeType": "text/markdown"},
					{"uri": "skill://p/greeting/notes", "name": "notes", "mimeType": "inode/directory"},
					{"uri": "skill://p/greeting/wave.bin", "name": "wave.bin", "mimeType": "application/octet-stream"},
				}},
				{"skill://p/greeting/notes", []map[string]any{{"uri": "skill://p/greeting/notes/TIPS.md", "name": "TIPS.md", "mimeType": "text/markdown"}}},
				{"skill://p/greeting/SKILL.md", nil},
				{"skill://q", nil},
				{"mem://plain", nil},
			} {
				w := call("resources/directory/read", `"uri":"`+tt.uri+`"`)
				if tt.want == nil {
					if w.Error == nil || w.Error.Code != -32602 {
						t.Errorf("resources/directory/read %s = %s; want -32602", tt.uri, w.raw)
					}
					continue
				}
				res.Resources = nil
				if err := json.Unmarshal(w.Result, &res); err != nil || !reflect.DeepEqual(res.Resources, tt.want) {
					t.Errorf("resources/directory/read %s = %s; want %v", tt.uri, w.raw, tt.want)
				}
			}
		})
	}
}
