package core

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/mcphost/mcphost/internal/escapetest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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

	var s *systest.Server
	// Registered first, so it runs after startServer's cleanup has waited
	// for the process and all of its stderr.
	t.Cleanup(func() {
		for _, p := range ps {
			if want := "plugin=" + p.name; !strings.Contains(s.Stderr.String(), want) {
				t.Errorf("stderr has no escape warning with %s:\n%s", want, s.Stderr)
			}
		}
	})
	s = systest.StartServer(t, mcp.NewClient(&mcp.Implementation{Name: "escape", Version: "1"}, nil), "--config", file, "--no-watch")
	for _, p := range ps {
		res, err := s.Session.CallTool(context.Background(), &mcp.CallToolParams{Name: p.name + "_probe", Arguments: escapetest.Args(p.s, p.secret)})
		if err != nil || res.IsError {
			t.Fatalf("%s_probe: %+v, %v", p.name, res, err)
		}
		escapetest.Check(t, p.s, []byte(systest.TextOf(t, res)))
		escapetest.CheckHost(t, p.s, p.mnt)
	}
}

// TestOperatorFilesOutOfReach serves the hostile guest with mounts over
// what the operator owns, and has it read and write those files.
//
//   - Read-only over the config's directory, it loads; plugins.toml, the
//     grants, policy and secrets files are EACCES through every name
//     (they are hidden), while a plain file there reads.
//   - Writable over a policy file's directory, over the secrets_file's, or
//     over a hard link to the grants file, the config is refused, naming
//     each (`mcphost validate` fails, and so would serve). Were it served,
//     the guest would write each file through its mount: none changes.
func TestOperatorFilesOutOfReach(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a real plugin")
	}
	src, err := filepath.Abs("../../sandbox/testdata/escapeguest")
	if err != nil {
		t.Fatal(err)
	}
	const grants = "# no grants\n"
	// files writes name → data under base (secrets files 0600).
	files := func(t *testing.T, base string, m map[string]string) {
		t.Helper()
		for name, data := range m {
			p := filepath.Join(base, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	call := func(t *testing.T, s *systest.Server, tool, path, data string) string {
		t.Helper()
		res, err := s.Session.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"path": path, "data": data}})
		if err != nil || res.IsError {
			t.Fatalf("%s %s: %+v, %v", tool, path, res, err)
		}
		return systest.TextOf(t, res)
	}
	client := func() *mcp.Client {
		return mcp.NewClient(&mcp.Implementation{Name: "operator-files", Version: "1"}, nil)
	}

	t.Run("read-only over the config", func(t *testing.T) {
		conf := filepath.Join(t.TempDir(), "conf")
		files(t, conf, map[string]string{
			"plugins.toml": fmt.Sprintf("[server]\nstartup_wait = \"180s\"\nsecrets_file = \"secrets.env\"\n\n"+
				"[[plugin]]\nname = \"ro\"\nsource = %q\npolicy = \"policy.yaml\"\nallowed_paths = [{ host = \".\", guest = \"/c\", read_only = true }]\n", src),
			"plugins.grants.toml": grants,
			"policy.yaml":         "version: \"1.0\"\n",
			"secrets.env":         "TOKEN=hunter2\n",
			"readme.txt":          "public",
			"sub/.keep":           "",
		})
		if err := os.Symlink("../secrets.env", filepath.Join(conf, "sub", "s")); err != nil {
			t.Fatal(err)
		}
		var s *systest.Server
		// Registered first, so it runs after startServer's cleanup has
		// waited for the process and all of its stderr.
		t.Cleanup(func() {
			if !strings.Contains(s.Stderr.String(), "operator file hidden") {
				t.Errorf("stderr has no \"operator file hidden\" warning:\n%s", s.Stderr)
			}
		})
		s = systest.StartServer(t, client(), "--config", filepath.Join(conf, "plugins.toml"), "--no-watch")
		for _, p := range []string{"/c/plugins.toml", "/c/plugins.grants.toml", "/c/policy.yaml", "/c/secrets.env", "/c/sub/s"} {
			if got := call(t, s, "ro_read_file", p, ""); got != "EACCES" {
				t.Errorf("read %s: %q; want EACCES (hidden)", p, got)
			}
		}
		if got := call(t, s, "ro_read_file", "/c/readme.txt", ""); got != "ok:public" {
			t.Errorf("read /c/readme.txt: %q; want ok:public", got)
		}
	})

	t.Run("writable over policy, secrets and a hard link to the grants", func(t *testing.T) {
		base := t.TempDir()
		conf := filepath.Join(base, "conf", "plugins.toml")
		policy := "version: \"1.0\"\n"
		files(t, base, map[string]string{
			"conf/plugins.toml": fmt.Sprintf("[server]\nstartup_wait = \"180s\"\nsecrets_file = \"../sec/secrets.env\"\n\n"+
				"[[plugin]]\nname = \"pol\"\nsource = %q\npolicy = \"../pol/policy.yaml\"\nallowed_paths = [{ host = \"../pol\", guest = \"/p\" }]\n\n"+
				"[[plugin]]\nname = \"sec\"\nsource = %q\nallowed_paths = [{ host = \"../sec\", guest = \"/s\" }]\n\n"+
				"[[plugin]]\nname = \"lnk\"\nsource = %q\nallowed_paths = [{ host = \"../data\", guest = \"/d\" }]\n", src, src, src),
			"conf/plugins.grants.toml": grants,
			"pol/policy.yaml":          policy,
			"sec/secrets.env":          "TOKEN=hunter2\n",
			"data/.keep":               "",
		})
		if err := os.Link(filepath.Join(base, "conf", "plugins.grants.toml"), filepath.Join(base, "data", "g")); err != nil {
			t.Fatal(err)
		}
		defer func() {
			for name, want := range map[string]string{"pol/policy.yaml": policy, "sec/secrets.env": "TOKEN=hunter2\n", "conf/plugins.grants.toml": grants} {
				if b, err := os.ReadFile(filepath.Join(base, name)); err != nil || string(b) != want {
					t.Errorf("%s = %q, %v after the attack; want it unchanged", name, b, err)
				}
			}
		}()
		out, err := exec.Command(systest.Binary(t), "validate", "--config", conf).CombinedOutput()
		if err != nil {
			for _, want := range []string{
				filepath.Join(base, "pol") + `" is writable and holds plugin "pol"'s policy file`,
				filepath.Join(base, "sec") + `" is writable and holds the server's secrets_file`,
				filepath.Join(base, "conf", "plugins.grants.toml") + " has 2 hard links",
			} {
				if !strings.Contains(string(out), want) {
					t.Errorf("validate does not say %q:\n%s", want, out)
				}
			}
			return
		}
		t.Errorf("validate accepts writable mounts over the operator's files:\n%s", out)
		s := systest.StartServer(t, client(), "--config", conf, "--no-watch")
		tools, err := s.Session.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		attacks := map[string][2]string{
			"pol_write_file": {"/p/policy.yaml", "permissions:\n  storage:\n    allow:\n      - uri: fs:///\n        access: [read, write]\n  environment:\n    allow:\n      - key: MCPHOST_STORE_PASSWORD\n"},
			"sec_write_file": {"/s/secrets.env", "TOKEN=forged\n"},
			"lnk_write_file": {"/d/g", "[[grant]]\nplugin = \"lnk\"\npath = \"/\"\naccess = \"write\"\n"},
		}
		for _, tool := range tools.Tools {
			if a, ok := attacks[tool.Name]; ok {
				t.Logf("%s %s: %s", tool.Name, a[0], call(t, s, tool.Name, a[0], a[1]))
			}
		}
	})
}
