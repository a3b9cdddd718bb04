package consent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/mcphost/mcphost/plugins/consent"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var (
	holdOnce sync.Once
	holdWasm []byte
	holdErr  error
)

// holdGuest builds testdata/holdguest once per test binary: a plugin that
// keeps a file open across calls.
func holdGuest(t *testing.T) []byte {
	t.Helper()
	holdOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mcphost-hold")
		if err != nil {
			holdErr = err
			return
		}
		defer os.RemoveAll(dir)
		out := filepath.Join(dir, "hold.wasm")
		if holdErr = systest.BuildReactor(out, "./testdata/holdguest"); holdErr != nil {
			return
		}
		holdWasm, holdErr = os.ReadFile(out)
	})
	if holdErr != nil {
		t.Fatalf("building the hold guest: %v", holdErr)
	}
	return holdWasm
}

// holdSetup writes wasm, a directory holding note.txt and a plugins.toml
// serving wasm as plugin "hold" (one instance, so that every call meets
// the file an earlier one kept) that may ask for the directory, writable.
// It returns the config file and the note's path.
func holdSetup(t *testing.T, wasm []byte) (conf, note string) {
	t.Helper()
	dir := t.TempDir()
	note = filepath.Join(dir, "note.txt")
	if err := os.WriteFile(note, []byte("a private note"), 0o644); err != nil {
		t.Fatal(err)
	}
	confDir := t.TempDir()
	file := filepath.Join(confDir, "hold.wasm")
	if err := os.WriteFile(file, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	conf = filepath.Join(confDir, "plugins.toml")
	body := fmt.Sprintf("[server]\nstartup_wait = \"180s\"\n\n[[plugin]]\nname = \"hold\"\npath = %s\ntimeout = \"5s\"\nmax_instances = 1\nmay_request_paths = [%s]\n",
		systest.Quote(file), systest.Quote(dir+":/data"))
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf, note
}

// holdCall calls hold_<tool> and returns its text and whether it is an
// error result.
func holdCall(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "hold_" + tool, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call hold_%s: %v", tool, err)
	}
	return systest.TextOf(t, res), res.IsError
}

// TestConsentOnceEndsWithCall drives the real `mcphost serve` with the Go
// SDK client, in both eras, over stdio and Streamable HTTP. A plugin
// opens a file under its may_request_paths with a person's allow_once
// answer and keeps the descriptor: in the next call, after the person has
// denied, reading and writing through it fail as a refused path does, no
// question is asked, and the file is unchanged.
func TestConsentOnceEndsWithCall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin and runs mcphost serve")
	}
	wasm := holdGuest(t)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(version+"/"+transport, func(t *testing.T) {
				conf, note := holdSetup(t, wasm)
				p := &systest.Person{Withdrawn: make(chan struct{})}
				cs := connectConsent(t, version, transport, conf, p)
				p.Say("allow_once")
				if text, isErr := holdCall(t, cs, "open", map[string]any{"path": "/data/note.txt"}); isErr || text != "a private note" {
					t.Fatalf("open under allow_once: got %q (isError %v); want the file", text, isErr)
				}
				p.Say("deny")
				if text, isErr := holdCall(t, cs, "read", map[string]any{}); !isErr || !strings.Contains(strings.ToLower(text), "permission denied") {
					t.Errorf("read in the next call: got %q (isError %v); want permission denied", text, isErr)
				}
				if text, isErr := holdCall(t, cs, "write", map[string]any{"text": "overwritten"}); !isErr || !strings.Contains(strings.ToLower(text), "permission denied") {
					t.Errorf("write in the next call: got %q (isError %v); want permission denied", text, isErr)
				}
				if q := p.Asked(); len(q) != 1 {
					t.Errorf("asked %q; want one question (the open)", q)
				}
				if b, err := os.ReadFile(note); err != nil || string(b) != "a private note" {
					t.Errorf("the file holds %q, %v; want it unchanged", b, err)
				}
			})
		}
	}
}

// TestConsentGrantFollowsCode drives the real `mcphost serve` with the Go
// SDK client: a person's allow_always is kept for the code they approved.
// Other code under the same plugin name (the same plugin with one more
// custom section) is asked again, and refused on deny; allowed for good,
// its grant replaces the first; `mcphost grants list` names the code each
// grant was given to.
func TestConsentGrantFollowsCode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin and runs mcphost serve")
	}
	first := holdGuest(t)
	// A custom section named "v2" holding "x": other code, same behaviour.
	second := append(append([]byte(nil), first...), 0x00, 0x04, 0x02, 'v', '2', 'x')
	digest := func(b []byte) string { h := sha256.Sum256(b); return "sha256:" + hex.EncodeToString(h[:]) }
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			conf, _ := holdSetup(t, first)
			open := func(cs *mcp.ClientSession) (string, bool) {
				return holdCall(t, cs, "open", map[string]any{"path": "/data/note.txt"})
			}
			p := &systest.Person{Withdrawn: make(chan struct{})}
			p.Say("allow_always")
			if text, isErr := open(connectConsent(t, version, "stdio", conf, p)); isErr || text != "a private note" {
				t.Fatalf("allow_always: got %q (isError %v)", text, isErr)
			}
			grants := func() []consent.Grant {
				g, err := consent.OpenGrants(consent.GrantsFile(conf))
				if err != nil {
					t.Fatal(err)
				}
				return g.List()
			}
			if l := grants(); len(l) != 1 || l[0].Code != digest(first) {
				t.Fatalf("grants %+v; want one, given to %s", l, digest(first))
			}
			if err := os.WriteFile(filepath.Join(filepath.Dir(conf), "hold.wasm"), second, 0o644); err != nil {
				t.Fatal(err)
			}
			p2 := &systest.Person{Withdrawn: make(chan struct{})}
			p2.Say("deny", "allow_always")
			cs := connectConsent(t, version, "stdio", conf, p2)
			if text, isErr := open(cs); !isErr || strings.Contains(text, "a private note") {
				t.Errorf("other code, denied: got %q (isError %v); want a refusal", text, isErr)
			}
			if q := p2.Asked(); len(q) != 1 || !strings.Contains(q[0], `Plugin "hold"`) {
				t.Fatalf("other code: asked %q; want one question", q)
			}
			if text, isErr := open(cs); isErr || text != "a private note" {
				t.Fatalf("other code, allow_always: got %q (isError %v)", text, isErr)
			}
			if l := grants(); len(l) != 1 || l[0].Code != digest(second) {
				t.Errorf("grants %+v; want one, given to %s", l, digest(second))
			}
			out, err := exec.Command(systest.Binary(t), "grants", "list", "--config", conf).CombinedOutput()
			if want := consent.ShortDigest(digest(second)); err != nil || !strings.Contains(string(out), want) {
				t.Errorf("grants list: %s, %v; want it to name %s", out, err, want)
			}
		})
	}
}

// TestConsentNotKeptSaid drives the real `mcphost serve` with the Go SDK
// client, in both eras: when the grants file cannot be written (a
// read-only config directory; tests run as root here, so a directory in
// the file's place stands for one), allow_always allows the call, and the
// result the person sees says, after the plugin's content, that the answer
// was not kept and why.
func TestConsentNotKeptSaid(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin and runs mcphost serve")
	}
	wasm := holdGuest(t)
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			conf, _ := holdSetup(t, wasm)
			if err := os.Mkdir(consent.GrantsFile(conf), 0o755); err != nil {
				t.Fatal(err)
			}
			p := &systest.Person{Withdrawn: make(chan struct{})}
			p.Say("allow_always")
			cs := connectConsent(t, version, "stdio", conf, p)
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "hold_open", Arguments: map[string]any{"path": "/data/note.txt"}})
			if err != nil || res.IsError || len(res.Content) != 2 {
				t.Fatalf("allow_always, not kept: %+v, %v; want the file and a note", res, err)
			}
			if got := systest.TextOf(t, &mcp.CallToolResult{Content: res.Content[:1]}); got != "a private note" {
				t.Errorf("first content %q; want the plugin's", got)
			}
			note := systest.TextOf(t, &mcp.CallToolResult{Content: res.Content[1:]})
			for _, want := range []string{"allow_always", "could not be kept", consent.GrantsFileName, "this call only", "asked again"} {
				if !strings.Contains(note, want) {
					t.Errorf("note %q; want it to contain %q", note, want)
				}
			}
		})
	}
}
