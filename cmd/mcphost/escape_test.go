package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcphost/mcphost/internal/escapetest"
)

// TestEscapeGuestServed serves the hostile guest of sandbox/testdata
// through `mcphost serve`, one plugin per kind of mount, and asserts each
// report exactly (internal/escapetest/want) and the warnings on stderr.
func TestEscapeGuestServed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a real plugin")
	}
	src, err := filepath.Abs("../../sandbox/testdata/escapeguest")
	if err != nil {
		t.Fatal(err)
	}
	type plugin struct {
		name   string
		s      escapetest.Scenario
		mnt    string
		secret string
	}
	var ps []plugin
	cfg := "[server]\nstartup_wait = \"180s\"\n"
	for _, s := range escapetest.Scenarios() {
		mnt, other, secret := escapetest.Tree(t, s)
		name := strings.ReplaceAll(s.Name, "-", "")
		ps = append(ps, plugin{name: name, s: s, mnt: mnt, secret: secret})
		cfg += fmt.Sprintf("\n[[plugin]]\nname = %q\nsource = %q\nallowed_paths = [{ host = %q, guest = %q, read_only = %v }, %q]\n",
			name, src, mnt, escapetest.Dir, s.ReadOnly, other+":"+escapetest.Other)
	}
	file := filepath.Join(t.TempDir(), "plugins.toml")
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}

	var s *server
	// Registered first, so it runs after startServer's cleanup has waited
	// for the process and all of its stderr.
	t.Cleanup(func() {
		for _, p := range ps {
			if want := "plugin=" + p.name; !strings.Contains(s.stderr.String(), want) {
				t.Errorf("stderr has no escape warning with %s:\n%s", want, s.stderr)
			}
		}
	})
	s = startServer(t, mcp.NewClient(&mcp.Implementation{Name: "escape", Version: "1"}, nil), "--config", file, "--no-watch")
	for _, p := range ps {
		res, err := s.session.CallTool(context.Background(), &mcp.CallToolParams{Name: p.name + "_probe", Arguments: escapetest.Args(p.s, p.secret)})
		if err != nil || res.IsError {
			t.Fatalf("%s_probe: %+v, %v", p.name, res, err)
		}
		escapetest.Check(t, p.s, []byte(textOf(t, res)))
		escapetest.CheckHost(t, p.s, p.mnt)
	}
}
