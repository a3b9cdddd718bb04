package core

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const skillV1 = "---\nname: howto\ndescription: first\n---\n# How to\n"

// TestSkillsReload serves a plugin's skills from plugins.toml (skills =
// ["skills/*"]) to the official Go SDK client, in both eras over stdio
// and HTTP: the SKILL.md is a listed, readable resource, and a save of it
// reaches the client as resources/list_changed with the new description.
func TestSkillsReload(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mcphost serve")
	}
	eachEra(t, func(t *testing.T, connect connectFunc) {
		dir := t.TempDir()
		conf := filepath.Join(dir, "plugins.toml")
		writeTestFile(t, filepath.Join(dir, "p.wasm"), systest.WasmPlugin("p", []string{"x"}, nil, nil))
		if err := os.MkdirAll(filepath.Join(dir, "skills/howto/notes"), 0o755); err != nil {
			t.Fatal(err)
		}
		md := filepath.Join(dir, "skills/howto/SKILL.md")
		writeTestFile(t, md, []byte(skillV1))
		writeTestFile(t, filepath.Join(dir, "skills/howto/notes/a.md"), []byte("a\n"))
		writeTestFile(t, conf, []byte("[server]\nname = \"skills\"\n\n[[plugin]]\nname = \"p\"\npath = \"p.wasm\"\nskills = [\"skills/*\"]\n"))
		changed := make(chan struct{}, 16)
		client := mcp.NewClient(&mcp.Implementation{Name: "skills", Version: "1"}, &mcp.ClientOptions{
			ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { changed <- struct{}{} },
		})
		cs, _ := connect(client, "--config", conf)
		ctx := context.Background()
		const uri = "skill://p/howto/SKILL.md"
		rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != skillV1 || rr.Contents[0].MIMEType != "text/markdown" {
			t.Fatalf("resources/read %s: %v %+v", uri, err, rr)
		}
		if rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://p/howto/notes/a.md"}); err != nil || rr.Contents[0].Text != "a\n" {
			t.Errorf("resources/read of a supporting file: %v %+v", err, rr)
		}
		description := func() string {
			res, err := cs.ListResources(ctx, nil)
			if err != nil {
				t.Fatalf("resources/list: %v", err)
			}
			for _, r := range res.Resources {
				if r.URI == uri {
					return r.Description
				}
			}
			return ""
		}
		if d := description(); d != "first" {
			t.Fatalf("listed SKILL.md description = %q; want first", d)
		}
		writeTestFile(t, md, []byte("---\nname: howto\ndescription: second\n---\n"))
		deadline := time.After(systest.NoteTimeout)
		for d := description(); d != "second"; d = description() {
			select {
			case <-changed:
			case <-deadline:
				t.Fatalf("after a save of SKILL.md: description = %q; want second", d)
			}
		}
	})
}

// TestComponentSkills: a WebAssembly component (the kinds component of
// scripts/components.sh) ships a skill from its plugins.toml table, read
// from the component's directory.
func TestComponentSkills(t *testing.T) {
	wasm := filepath.Join(os.Getenv("MCPHOST_COMPONENTS"), "kinds.wasm")
	code, err := os.ReadFile(wasm)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v (CI=true: scripts/components.sh should have built it)", err)
		}
		t.Skipf("skipping: %v; run scripts/components.sh (or eval \"$(scripts/components.sh --env)\")", err)
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "plugins.toml")
	if err := os.MkdirAll(filepath.Join(dir, "plugins/skills/kinds-guide"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, "plugins/kinds.wasm"), code)
	writeTestFile(t, filepath.Join(dir, "plugins/skills/kinds-guide/SKILL.md"), []byte("---\nname: kinds-guide\ndescription: Which kinds tool to call\n---\nUse kinds_greet to greet.\n"))
	writeTestFile(t, conf, []byte("[[plugin]]\nname = \"kinds\"\npath = \"plugins/kinds.wasm\"\nskills = [\"skills/*\"]\n"))
	client := mcp.NewClient(&mcp.Implementation{Name: "component-skills", Version: "1"}, nil)
	cs := systest.StartServerEra(t, client, "2026-07-28", "--config", conf, "--no-watch").Session
	ctx := context.Background()
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "skill://kinds/kinds-guide/SKILL.md"})
	if err != nil || len(rr.Contents) != 1 || !strings.HasSuffix(rr.Contents[0].Text, "Use kinds_greet to greet.\n") {
		t.Fatalf("resources/read of the component's skill: %v %+v", err, rr)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "kinds_greet", Arguments: map[string]any{"name": "x"}}); err != nil || res.IsError {
		t.Errorf("kinds_greet beside the skill: %v %+v", err, res)
	}
}
