package consent

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sandbox"
)

// askPeer answers elicitation/create with answer (or err) and keeps what
// it was asked.
type askPeer struct {
	answer string
	err    error
	asked  []json.RawMessage
}

func (p *askPeer) Request(_ context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if method != "elicitation/create" {
		return nil, errors.New("unexpected " + method)
	}
	p.asked = append(p.asked, params)
	return json.RawMessage(p.answer), p.err
}

func (p *askPeer) Notify(context.Context, string, json.RawMessage) error { return nil }

// testCode is the code the tests' grants are given to.
var testCode = Code{Digest: "sha256:" + strings.Repeat("ab", 32)}

func TestConsentAllow(t *testing.T) {
	reach := sandbox.Reach{Plugin: "fetch", Host: "example.com", Port: 443}
	accept := func(d string) string { return `{"action":"accept","content":{"decision":"` + d + `"}}` }
	tests := []struct {
		name      string
		answer    string
		err       error
		noPeer    bool
		allowed   bool
		stored    bool
		refusal   string // substring of the refusal
		askedNext bool   // a second reach in the same call asks again
	}{
		{name: "allow_once", answer: accept("allow_once"), allowed: true},
		{name: "allow_always", answer: accept("allow_always"), allowed: true, stored: true},
		{name: "deny", answer: accept("deny"), refusal: "a person denied it", askedNext: true},
		{name: "decline", answer: `{"action":"decline"}`, refusal: `answered "decline"`, askedNext: true},
		{name: "cancel", answer: `{"action":"cancel"}`, refusal: `answered "cancel"`, askedNext: true},
		{name: "unknown decision", answer: accept("allow_forever"), refusal: `answered decision "allow_forever"`, askedNext: true},
		{name: "no content", answer: `{"action":"accept"}`, refusal: "without a decision", askedNext: true},
		{name: "client cannot be asked", err: errors.New("the client did not declare elicitation"), refusal: "could not be asked", askedNext: true},
		{name: "no client", noPeer: true, refusal: "no client is attached"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := OpenGrants(filepath.Join(t.TempDir(), GrantsFileName))
			if err != nil {
				t.Fatal(err)
			}
			c := &Decider{grants: g, log: discard(), code: testCode}
			p := &askPeer{answer: tc.answer, err: tc.err}
			ctx := withOnce(context.Background())
			if !tc.noPeer {
				ctx = sandbox.WithPeer(ctx, p)
			}
			err = c.Allow(ctx, reach)
			if (err == nil) != tc.allowed {
				t.Fatalf("Allow: %v; want allowed %v", err, tc.allowed)
			}
			if err != nil {
				for _, want := range []string{tc.refusal, `add "example.com:443" to allowed_hosts in [[plugin]] fetch`} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("refusal %q; want it to contain %q", err, want)
					}
				}
			}
			if got := g.Has(reach, testCode); got != tc.stored {
				t.Errorf("grant stored = %v; want %v", got, tc.stored)
			}
			if tc.noPeer {
				return
			}
			if len(p.asked) != 1 {
				t.Fatalf("asked %d times; want 1", len(p.asked))
			}
			c.Allow(ctx, reach)
			if got := len(p.asked) == 2; got != tc.askedNext {
				t.Errorf("second reach in the call asked again = %v; want %v", got, tc.askedNext)
			}
			// A new call: only a stored grant spares the question.
			before := len(p.asked)
			c.Allow(sandbox.WithPeer(withOnce(context.Background()), p), reach)
			if asked := len(p.asked) > before; asked == tc.stored {
				t.Errorf("a new call asked = %v; want %v", asked, !tc.stored)
			}
		})
	}
}

// TestConsentParams checks the question: one property, decision, an enum
// of the three answers; a message naming the plugin and host:port; an
// input key in the host's reserved space.
func TestConsentParams(t *testing.T) {
	var p struct {
		Message         string `json:"message"`
		RequestedSchema struct {
			Type       string `json:"type"`
			Properties map[string]struct {
				Type string   `json:"type"`
				Enum []string `json:"enum"`
			} `json:"properties"`
			Required []string `json:"required"`
		} `json:"requestedSchema"`
		Meta map[string]string `json:"_meta"`
	}
	if err := json.Unmarshal(Params("fetch", "[::1]:8080"), &p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Message, `Plugin "fetch"`) || !strings.Contains(p.Message, "[::1]:8080") {
		t.Errorf("message %q; want it to name the plugin and [::1]:8080", p.Message)
	}
	d, ok := p.RequestedSchema.Properties["decision"]
	if len(p.RequestedSchema.Properties) != 1 || !ok || d.Type != "string" ||
		strings.Join(d.Enum, ",") != "allow_once,allow_always,deny" || strings.Join(p.RequestedSchema.Required, ",") != "decision" {
		t.Errorf("requestedSchema %+v; want one required string property decision: allow_once, allow_always, deny", p.RequestedSchema)
	}
	if key := p.Meta[abi.MetaInputKey]; !strings.HasPrefix(key, abi.ConsentInputKeyPrefix) || !IsKey(key) || IsKey("fetch:[::1]:8080") {
		t.Errorf("input key %q; want the prefix %q, which IsKey (and only it) recognises", key, abi.ConsentInputKeyPrefix)
	}
}

// TestGrantsFile: Grant and Revoke write the file whole (another Grants on
// it reads the same), never write over a file they could not read, and a
// file that does not parse stands for no grants.
func TestGrantsFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), GrantsFileName)
	g, err := OpenGrants(file)
	if err != nil || len(g.List()) != 0 {
		t.Fatalf("a missing file: %v, %v; want no grants and no error", g.List(), err)
	}
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for _, r := range []sandbox.Reach{
		{Plugin: "fetch", Host: "b.example", Port: 443}, {Plugin: "fetch", Host: "a.example", Port: 443},
		{Plugin: "other", Host: "::1", Port: 8080}, {Plugin: "fetch", Host: "a.example", Port: 443},
	} {
		if err := g.Grant(context.Background(), r, testCode, now); err != nil {
			t.Fatal(err)
		}
	}
	other, err := OpenGrants(file)
	if err != nil {
		t.Fatal(err)
	}
	want := "fetch a.example:443,fetch b.example:443,other [::1]:8080"
	if got := grantsString(other.List()); got != want {
		t.Errorf("read back %q; want %q", got, want)
	}
	if gr := other.List()[0]; !gr.Granted.Equal(now) {
		t.Errorf("granted %v; want %v", gr.Granted, now)
	}
	gone, err := other.Revoke(context.Background(), "fetch", "b.example:443")
	if err != nil || grantsString(gone) != "fetch b.example:443" {
		t.Fatalf("Revoke: %v, %v", gone, err)
	}
	if err := g.Reload(); err != nil || g.Has(sandbox.Reach{Plugin: "fetch", Host: "b.example", Port: 443}, testCode) || !g.Has(sandbox.Reach{Plugin: "fetch", Host: "a.example", Port: 443}, testCode) {
		t.Errorf("after a revoke elsewhere and Reload: %v, %v", g.List(), err)
	}
	if gone, err := g.Revoke(context.Background(), "fetch", ""); err != nil || grantsString(gone) != "fetch a.example:443" {
		t.Errorf("Revoke all of fetch: %v, %v", gone, err)
	}
	if err := os.WriteFile(file, []byte("[[grant]\nplugin = "), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := g.Reload(); err == nil || len(g.List()) != 0 || !strings.Contains(err.Error(), file) {
		t.Errorf("a bad file: %v, %v; want an error naming it and no grants", g.List(), err)
	}
	if err := g.Grant(context.Background(), sandbox.Reach{Plugin: "fetch", Host: "c.example", Port: 443}, testCode, now); err == nil {
		t.Errorf("Grant over a bad file succeeded; want it refused")
	}
	if b, _ := os.ReadFile(file); string(b) != "[[grant]\nplugin = " {
		t.Errorf("the bad file was rewritten: %q", b)
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(file), ".plugins.grants-*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

func grantsString(list []Grant) string {
	var parts []string
	for _, g := range list {
		parts = append(parts, g.Plugin+" "+g.Target())
	}
	return strings.Join(parts, ",")
}

// TestConsentPath: a may_request_paths directory is asked about as read or
// write; allow_always keeps a path grant that a reload (another Grants on
// the file) honours, a read grant does not stand for a write, and a write
// allowed once also allows reading in the same call. A refusal names
// allowed_paths.
func TestConsentPath(t *testing.T) {
	file := filepath.Join(t.TempDir(), GrantsFileName)
	g, err := OpenGrants(file)
	if err != nil {
		t.Fatal(err)
	}
	c := &Decider{grants: g, log: discard(), code: testCode}
	read := sandbox.Reach{Plugin: "files", Path: "/srv/docs"}
	write := sandbox.Reach{Plugin: "files", Path: "/srv/docs", Write: true}
	accept := func(d string) *askPeer {
		return &askPeer{answer: `{"action":"accept","content":{"decision":"` + d + `"}}`}
	}

	p := accept(AllowAlways)
	if err := c.Allow(sandbox.WithPeer(withOnce(context.Background()), p), read); err != nil {
		t.Fatalf("allow_always: %v", err)
	}
	var q struct {
		Message string            `json:"message"`
		Meta    map[string]string `json:"_meta"`
	}
	if len(p.asked) != 1 || json.Unmarshal(p.asked[0], &q) != nil ||
		!strings.Contains(q.Message, `Plugin "files" wants to read files in /srv/docs, which its allowed_paths does not allow`) ||
		!strings.Contains(q.Meta[abi.MetaInputKey], abi.ConsentInputKeyPrefix+"files:read:/srv/docs") {
		t.Fatalf("asked %s; want one question naming the plugin, the directory and read", p.asked)
	}
	reloaded, err := OpenGrants(file)
	if err != nil {
		t.Fatal(err)
	}
	if l := reloaded.List(); len(l) != 1 || l[0].Path != "/srv/docs" || l[0].Access != AccessRead || l[0].Host != "" {
		t.Fatalf("grants after allow_always %+v; want one read grant for /srv/docs", l)
	}
	c2 := &Decider{grants: reloaded, log: discard(), code: testCode}
	p2 := accept(Deny)
	ctx := sandbox.WithPeer(withOnce(context.Background()), p2)
	if err := c2.Allow(ctx, read); err != nil || len(p2.asked) != 0 {
		t.Errorf("a read with the grant reloaded: %v, asked %d; want allowed unasked", err, len(p2.asked))
	}
	err = c2.Allow(ctx, write)
	if err == nil || len(p2.asked) != 1 || !strings.Contains(err.Error(), `add "/srv/docs" to allowed_paths in [[plugin]] files`) {
		t.Errorf("a write over a read grant, denied: %v, asked %d; want asked and refused naming allowed_paths", err, len(p2.asked))
	}

	other := sandbox.Reach{Plugin: "files", Path: "/srv/out"}
	p3 := accept(AllowOnce)
	ctx = sandbox.WithPeer(withOnce(context.Background()), p3)
	if err := c2.Allow(ctx, sandbox.Reach{Plugin: "files", Path: "/srv/out", Write: true}); err != nil {
		t.Fatal(err)
	}
	if err := c2.Allow(ctx, other); err != nil || len(p3.asked) != 1 {
		t.Errorf("a read after a write allowed once: %v, asked %d; want allowed unasked", err, len(p3.asked))
	}
	if reloaded.Has(other, testCode) {
		t.Errorf("allow_once stored a grant")
	}
	if gone, err := reloaded.Revoke(context.Background(), "files", "/srv/docs"); err != nil || len(gone) != 1 {
		t.Errorf("Revoke by directory: %v, %v", gone, err)
	}
}

// TestGrantFollowsCode: a grant stands for the code a person approved.
// Other code under the same plugin name is asked again (and the log says
// why), its allow_always replaces the old grant, and a grant written before
// grants named code (an old file, which still reads) is asked again too.
func TestGrantFollowsCode(t *testing.T) {
	file := filepath.Join(t.TempDir(), GrantsFileName)
	old := "[[grant]]\nplugin = \"fetch\"\nhost = \"example.com:443\"\ngranted = 2026-01-02T03:04:05Z\n"
	if err := os.WriteFile(file, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	g, err := OpenGrants(file)
	if err != nil || len(g.List()) != 1 {
		t.Fatalf("an old grants file: %v, %v; want it read", g.List(), err)
	}
	reach := sandbox.Reach{Plugin: "fetch", Host: "example.com", Port: 443}
	a := Code{Digest: "sha256:" + strings.Repeat("a", 64), Signer: "key sha256:1234"}
	b := Code{Digest: "sha256:" + strings.Repeat("b", 64)}
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ask := func(code Code, answer string) (error, int) {
		p := &askPeer{answer: `{"action":"accept","content":{"decision":"` + answer + `"}}`}
		c := &Decider{grants: g, log: log, code: code}
		err := c.Allow(sandbox.WithPeer(withOnce(context.Background()), p), reach)
		return err, len(p.asked)
	}
	steps := []struct {
		name   string
		code   Code
		answer string
		asked  int
		err    bool
		logged string // in the log of this step
	}{
		{"an old grant is asked again", a, AllowAlways, 1, false, "written before grants named the code"},
		{"the same code is not asked", a, Deny, 0, false, ""},
		{"other code is asked again", b, Deny, 1, true, "given to other code"},
		{"other code granted", b, AllowAlways, 1, false, "given to other code"},
		{"the first code is asked again", a, Deny, 1, true, "given to other code"},
	}
	for _, st := range steps {
		logs.Reset()
		err, asked := ask(st.code, st.answer)
		if (err != nil) != st.err || asked != st.asked {
			t.Errorf("%s: %v, asked %d; want error %v, asked %d", st.name, err, asked, st.err, st.asked)
		}
		if !strings.Contains(logs.String(), st.logged) || st.logged == "" && strings.Contains(logs.String(), "asked again") {
			t.Errorf("%s: logged %q; want %q", st.name, logs.String(), st.logged)
		}
	}
	reread, err := OpenGrants(file)
	if err != nil {
		t.Fatal(err)
	}
	if l := reread.List(); len(l) != 1 || l[0].Code != b.Digest || l[0].Signer != "" || !reread.Has(reach, b) || reread.Has(reach, a) {
		t.Errorf("grants %+v; want one, given to %s", l, b.Digest)
	}
	if err := os.WriteFile(file, []byte("[[grant]]\nplugin = \"fetch\"\nhost = \"example.com:443\"\ncode = \"sha256:xyz\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := reread.Reload(); err == nil || !strings.Contains(err.Error(), `code "sha256:xyz"`) {
		t.Errorf("a bad code: %v; want an error naming it", err)
	}
}

// withOnce gives ctx a module call's own allow_once answers, as plugins'
// moduleCall does.
func withOnce(ctx context.Context) context.Context {
	return context.WithValue(ctx, onceKey{}, &Once{})
}

// TestConsentNotKept: an allow_always answer whose grant cannot be written
// (a read-only config directory; here one that does not exist) allows the
// call, and the call's result tells the person, after the plugin's own
// content, that the answer was not kept, why, and what to change.
func TestConsentNotKept(t *testing.T) {
	file := filepath.Join(t.TempDir(), "gone", GrantsFileName)
	g, err := OpenGrants(file)
	if err != nil {
		t.Fatal(err)
	}
	reach := sandbox.Reach{Plugin: "files", Path: "/srv/docs"}
	c := &Decider{grants: g, log: discard(), code: testCode}
	p := &askPeer{answer: `{"action":"accept","content":{"decision":"allow_always"}}`}
	notes := &Notes{}
	ctx := context.WithValue(context.Background(), notesKey{}, notes) // as a tool call's context answers it
	if err := c.Allow(sandbox.WithPeer(withOnce(ctx), p), reach); err != nil {
		t.Fatalf("Allow: %v; want allowed for this call", err)
	}
	if g.Has(reach, testCode) {
		t.Fatalf("a grant stands; want none")
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"after the plugin's content", `{"content":[{"type":"text","text":"a note"}],"structuredContent":{"n":1}}`,
			`{"content":[{"type":"text","text":"a note"},{"type":"text","text":"NOTE"}],"structuredContent":{"n":1}}`},
		{"no content", `{"isError":false}`, `{"content":[{"type":"text","text":"NOTE"}],"isError":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := notes.AppendTo(json.RawMessage(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				Content []abi.Content `json:"content"`
			}
			if err := json.Unmarshal(out, &res); err != nil || len(res.Content) == 0 {
				t.Fatalf("result %s: %v", out, err)
			}
			note := res.Content[len(res.Content)-1].Text
			for _, want := range []string{"allow_always", `plugin "files"`, "read files in /srv/docs", "could not be kept", file,
				"for this call only", "asked again", `add "/srv/docs" to allowed_paths in [[plugin]] files`} {
				if !strings.Contains(note, want) {
					t.Errorf("note %q; want it to contain %q", note, want)
				}
			}
			if got := strings.Replace(string(out), strings.TrimSuffix(strings.TrimPrefix(string(mustJSON(t, note)), `"`), `"`), "NOTE", 1); got != tc.want {
				t.Errorf("result %s; want %s", got, tc.want)
			}
		})
	}
	none := &Notes{}
	if out, err := none.AppendTo(json.RawMessage(`{"content":[]}`)); err != nil || string(out) != `{"content":[]}` {
		t.Errorf("no notes: %s, %v; want the result as it was", out, err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestGrantsFileBounded: the grants file is read with the one reader of
// operator files: a sparse 1 GiB file is refused before it is read,
// naming the file and the limit, and a link out of its directory is
// refused; either way no grant stands.
func TestGrantsFileBounded(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "forged.toml")
	if err := os.WriteFile(outside, []byte("[[grant]]\nplugin = \"fetch\"\ncode = \"sha256:"+strings.Repeat("0", 64)+"\"\nhost = \"a.example:443\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		make func(file string) error
		want string
	}{
		{"sparse", func(f string) error {
			if err := os.WriteFile(f, nil, 0o600); err != nil {
				return err
			}
			return os.Truncate(f, 1<<30)
		}, "is 1073741824 bytes, more than the limit of 16 MiB"},
		{"linked out", func(f string) error { return os.Symlink(outside, f) }, "leads outside"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), GrantsFileName)
			if err := tt.make(file); err != nil {
				t.Fatal(err)
			}
			g, err := OpenGrants(file)
			if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("OpenGrants: %v; want an error naming %s and saying %q", err, file, tt.want)
			}
			if g != nil && len(g.List()) != 0 {
				t.Errorf("grants %v stand from a file refused", g.List())
			}
		})
	}
}

// TestGrantsFileHardLink: a grants file with a second name (a hard link,
// which could sit inside a plugin's writable mount) is distrusted: no
// grant of it stands, and the error names it.
func TestGrantsFileHardLink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("hard links are not counted on Windows")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, GrantsFileName)
	g, err := OpenGrants(file)
	if err != nil {
		t.Fatal(err)
	}
	r := sandbox.Reach{Plugin: "fetch", Host: "a.example", Port: 443}
	if err := g.Grant(context.Background(), r, testCode, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(file, filepath.Join(dir, "forged.toml")); err != nil {
		t.Fatal(err)
	}
	if err := g.Reload(); err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "2 hard links") || g.Has(r, testCode) {
		t.Errorf("Reload of a hard-linked grants file: %v, grant stands %v; want an error naming it and no grant", err, g.Has(r, testCode))
	}
}
