package consent

import (
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/mcphost/mcphost/plugins/consent"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// consentConfig writes a plugins.toml in a new directory: the fetch
// example, which may ask for 127.0.0.1 (any port) and nothing else, and
// whose calls time out after timeout.
func consentConfig(t *testing.T, timeout string) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("..", "..", "examples", "fetch"))
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "plugins.toml")
	body := fmt.Sprintf("[server]\nstartup_wait = \"180s\"\n\n[[plugin]]\nname = \"fetch\"\nsource = %s\ntimeout = %q\nmay_request_hosts = [\"127.0.0.1\"]\n",
		systest.Quote(src), timeout)
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf
}

// fetchOnce calls fetch_fetch with target and returns its text and
// whether it is an error result.
func fetchOnce(t *testing.T, cs *mcp.ClientSession, target string) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fetch_fetch", Arguments: map[string]any{"url": target}})
	if err != nil {
		t.Fatalf("tools/call fetch_fetch %s: %v", target, err)
	}
	return systest.TextOf(t, res), res.IsError
}

// connectConsent starts mcphost serve on conf over transport and connects
// a Go SDK client of version; p, when not nil, answers elicitation.
func connectConsent(t *testing.T, version, transport, conf string, p *systest.Person) *mcp.ClientSession {
	t.Helper()
	opts := &mcp.ClientOptions{}
	if p != nil {
		opts.ElicitationHandler = p.Handle
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "consent", Version: "1"}, opts)
	args := []string{"--config", conf, "--no-watch"}
	if transport == "stdio" {
		return systest.StartServerEra(t, client, version, args...).Session
	}
	return systest.ConnectHTTP(t, client, version, args...)
}

// TestConsent drives the real `mcphost serve` with the Go SDK client, in
// both eras (a paused call answering elicitation/create in 2025-11-25; an
// input_required round the client answers and retries in 2026-07-28),
// over stdio and Streamable HTTP. The fetch example reaches for a
// loopback server outside its allowed_hosts:
//
//   - allow_once proceeds, and the next call asks again;
//   - deny and decline are refused, and nothing reaches the server;
//   - a host may_request_hosts does not name is refused without a question;
//   - no answer before the call's timeout is refused (2025-11-25: only a
//     paused call has a timeout to run out);
//   - allow_always proceeds, is written to plugins.grants.toml, is not
//     asked again, and holds in a new process;
//   - a client without elicitation is never asked, and the refusal names
//     the key to edit.
func TestConsent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the fetch example and runs mcphost serve")
	}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(version+"/"+transport, func(t *testing.T) {
				up := systest.NewUpstream(t)
				target := "127.0.0.1:" + up.Port
				conf := consentConfig(t, "3s")
				p := &systest.Person{Withdrawn: make(chan struct{})}
				cs := connectConsent(t, version, transport, conf, p)
				asked := 0
				expectAsked := func(step string, n int) {
					t.Helper()
					asked += n
					got := p.Asked()
					if len(got) != asked {
						t.Fatalf("%s: %d questions so far; want %d (%q)", step, len(got), asked, got)
					}
					for _, m := range got[len(got)-n:] {
						if !strings.Contains(m, `Plugin "fetch"`) || !strings.Contains(m, target) {
							t.Errorf("%s: question %q; want it to name plugin \"fetch\" and %s", step, m, target)
						}
					}
				}
				expectHits := func(step string, want int32) {
					t.Helper()
					if got := up.Hits.Load(); got != want {
						t.Errorf("%s: the upstream server got %d requests; want %d", step, got, want)
					}
				}

				p.Say("allow_once")
				if text, isErr := fetchOnce(t, cs, up.URL+"/a"); isErr || !strings.Contains(text, "hello from upstream") {
					t.Fatalf("allow_once: got %q (isError %v); want the upstream's text", text, isErr)
				}
				expectAsked("allow_once", 1)
				expectHits("allow_once", 1)

				p.Say("allow_once")
				if text, isErr := fetchOnce(t, cs, up.URL+"/b"); isErr || !strings.Contains(text, "hello from upstream") {
					t.Fatalf("allow_once again: got %q (isError %v)", text, isErr)
				}
				expectAsked("allow_once asks again", 1)
				expectHits("allow_once again", 2)

				for _, answer := range []string{"deny", "decline"} {
					p.Say(answer)
					text, isErr := fetchOnce(t, cs, up.URL+"/c")
					if !isErr || !strings.Contains(text, "allowed_hosts") {
						t.Errorf("%s: got %q (isError %v); want a refusal naming allowed_hosts", answer, text, isErr)
					}
					expectAsked(answer, 1)
					expectHits(answer, 2)
				}

				text, isErr := fetchOnce(t, cs, "http://localhost:"+up.Port+"/d")
				if !isErr || !strings.Contains(text, "may_request_hosts does not name it") || !strings.Contains(text, "allowed_hosts") {
					t.Errorf("undeclared: got %q (isError %v); want a refusal naming allowed_hosts and may_request_hosts", text, isErr)
				}
				expectAsked("undeclared", 0)
				expectHits("undeclared", 2)

				if version == "2025-11-25" {
					p.Say("")
					text, isErr := fetchOnce(t, cs, up.URL+"/e")
					select {
					case <-p.Withdrawn:
					case <-time.After(time.Minute):
						t.Fatal("the unanswered question was not withdrawn (notifications/cancelled) when the call timed out")
					}
					if !isErr || !strings.Contains(text, "timeout") {
						t.Errorf("no answer: got %q (isError %v); want a timeout", text, isErr)
					}
					expectAsked("no answer", 1)
					expectHits("no answer", 2)
				}

				p.Say("allow_always")
				if text, isErr := fetchOnce(t, cs, up.URL+"/f"); isErr || !strings.Contains(text, "hello from upstream") {
					t.Fatalf("allow_always: got %q (isError %v)", text, isErr)
				}
				expectAsked("allow_always", 1)
				g, err := consent.OpenGrants(consent.GrantsFile(conf))
				if err != nil {
					t.Fatal(err)
				}
				if list := g.List(); len(list) != 1 || list[0].Plugin != "fetch" || list[0].Host != target {
					t.Errorf("plugins.grants.toml holds %+v; want fetch → %s", list, target)
				}
				if text, isErr := fetchOnce(t, cs, up.URL+"/g"); isErr || !strings.Contains(text, "hello from upstream") {
					t.Fatalf("after allow_always: got %q (isError %v)", text, isErr)
				}
				expectAsked("after allow_always", 0)
				expectHits("after allow_always", 4)

				// A new process reads the grant: no question.
				p2 := &systest.Person{}
				cs2 := connectConsent(t, version, transport, conf, p2)
				if text, isErr := fetchOnce(t, cs2, up.URL+"/h"); isErr || !strings.Contains(text, "hello from upstream") {
					t.Fatalf("after a restart: got %q (isError %v)", text, isErr)
				}
				if q := p2.Asked(); len(q) != 0 {
					t.Errorf("after a restart: asked %q; want no question", q)
				}
				expectHits("after a restart", 5)

				// A client without elicitation is never asked.
				cs3 := connectConsent(t, version, transport, consentConfig(t, "3s"), nil)
				text, isErr = fetchOnce(t, cs3, up.URL+"/i")
				if !isErr || !strings.Contains(text, "add \""+target+"\" to allowed_hosts in [[plugin]] fetch") {
					t.Errorf("no elicitation: got %q (isError %v); want a refusal naming allowed_hosts", text, isErr)
				}
				expectHits("no elicitation", 5)
			})
		}
	}
}

// TestAgentsCannotGrant: what an agent can reach is tools, resources and
// prompts, and none of those mcphost serves (every example plugin loaded
// together, and mcphost adds none of its own) touches grants; in the
// code, only a person's answer (plugins/consent/consent.go) adds a grant and only
// the command line (cmd/mcphost/internal/cli/grants.go) revokes one.
func TestAgentsCannotGrant(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every example and runs mcphost serve")
	}
	dirs, err := filepath.Glob(filepath.Join("..", "..", "examples", "*", "main.go"))
	if err != nil || len(dirs) < 5 {
		t.Fatalf("examples: %v, %v", dirs, err)
	}
	var conf strings.Builder
	conf.WriteString("[server]\nstartup_wait = \"300s\"\n")
	for _, m := range dirs {
		dir, _ := filepath.Abs(filepath.Dir(m))
		fmt.Fprintf(&conf, "\n[[plugin]]\nname = %q\nsource = %s\nmay_request_hosts = [\"*\"]\n", filepath.Base(dir), systest.Quote(dir))
	}
	file := filepath.Join(t.TempDir(), "plugins.toml")
	if err := os.WriteFile(file, []byte(conf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := connectConsent(t, "2025-11-25", "stdio", file, &systest.Person{})
	ctx := context.Background()
	var seen []string // name and description of everything an agent can reach
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, "tool "+tool.Name+": "+tool.Title+" "+tool.Description)
	}
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, "resource "+r.URI+": "+r.Name+" "+r.Description)
	}
	for r, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, "template "+r.URITemplate+": "+r.Name+" "+r.Description)
	}
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, "prompt "+p.Name+": "+p.Description)
	}
	if len(seen) < 10 {
		t.Fatalf("an agent sees only %d items: the check proves little (%q)", len(seen), seen)
	}
	for _, s := range seen {
		for _, word := range []string{"grant", "permission", "allowed_hosts", "may_request", "allow_always", "consent"} {
			if strings.Contains(strings.ToLower(s), word) {
				t.Errorf("%s: mentions %q; no tool, resource or prompt may touch grants", s, word)
			}
		}
	}
	t.Logf("%d tools, resources, templates and prompts; none touches grants", len(seen))
	if g, err := consent.OpenGrants(consent.GrantsFile(file)); err != nil || len(g.List()) != 0 {
		t.Errorf("grants after listing: %v, %v; want none", g.List(), err)
	}

	// In the code: every call of a method named Grant or Revoke (the
	// writers of a *consent.Grants), found by parsing every Go file.
	writers := map[string][]string{}
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != root && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && (sel.Sel.Name == "Grant" || sel.Sel.Name == "Revoke") {
					writers[filepath.ToSlash(rel)] = append(writers[filepath.ToSlash(rel)], sel.Sel.Name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"plugins/consent/consent.go": "Grant", "cmd/mcphost/internal/cli/grants.go": "Revoke"}
	if len(writers) != len(want) {
		t.Errorf("Grant and Revoke are called from %v; want only %v", writers, want)
	}
	for file, call := range want {
		if w := writers[file]; len(w) != 1 || w[0] != call {
			t.Errorf("%s calls %v; want %s once", file, w, call)
		}
	}
}

// tsConsentRun is what internal/tools/ts/consent-client.mjs prints.
type tsConsentRun struct {
	ProtocolVersion string
	Asked           []struct {
		Message string
		Schema  struct {
			Properties map[string]struct{ Enum []string }
		}
	}
	Calls []struct {
		IsError bool
		Content []struct{ Text string }
	}
}

// TestConsentTSClient: the official TypeScript clients, in both eras
// (@modelcontextprotocol/sdk 1.x in 2025-11-25, where the question is an
// elicitation/create request; @modelcontextprotocol/client 2.x in
// 2026-07-28, where it is an input_required round), over stdio and
// Streamable HTTP, are asked about a host outside allowed_hosts:
// allow_once proceeds, deny is refused, allow_always proceeds and is not
// asked again, in this process or the next. scripts/ts-sdk.sh installs the
// SDK; without it the test skips, unless CI=true.
func TestConsentTSClient(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "internal", "tools", "ts"))
	if err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	_, serr := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk"))
	if serr == nil {
		_, serr = os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "client"))
	}
	if err != nil || serr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node (%v) or the TypeScript SDK (%v) missing: run scripts/ts-sdk.sh", err, serr)
		}
		t.Skip("node or the TypeScript SDK missing: run scripts/ts-sdk.sh")
	}
	if testing.Short() {
		t.Skip("builds the fetch example and runs mcphost serve and node")
	}
	bin := systest.Binary(t)
	client := filepath.Join(dir, "consent-client.mjs")
	for _, era := range []struct{ sdk, version string }{{"1", "2025-11-25"}, {"2", "2026-07-28"}} {
		for _, transport := range []string{"stdio", "http"} {
			t.Run("sdk"+era.sdk+"-"+era.version+"/"+transport, func(t *testing.T) {
				consentTSRun(t, node, bin, client, era.sdk, era.version, transport)
			})
		}
	}
}

func consentTSRun(t *testing.T, node, bin, client, sdk, version, transport string) {
	up := systest.NewUpstream(t)
	target := "127.0.0.1:" + up.Port
	conf := consentConfig(t, "5s")
	run := func(answers []string, urls ...string) tsConsentRun {
		t.Helper()
		var calls []map[string]any
		for _, u := range urls {
			calls = append(calls, map[string]any{"name": "fetch_fetch", "arguments": map[string]string{"url": u}})
		}
		a, _ := json.Marshal(answers)
		c, _ := json.Marshal(calls)
		args := []string{client, "--sdk", sdk, transport, string(a), string(c)}
		if transport == "stdio" {
			args = append(args, "--", bin, "serve", "--config", conf, "--no-watch")
		} else {
			_, url := systest.ServeHTTP(t, "--config", conf, "--no-watch")
			args = append(args, url)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, node, args...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node client: %v\n%s", err, stderr.String())
		}
		var got tsConsentRun
		if err := json.Unmarshal(out, &got); err != nil || len(got.Calls) != len(urls) {
			t.Fatalf("node client printed %s (%v); want %d calls", out, err, len(urls))
		}
		if got.ProtocolVersion != version {
			t.Fatalf("the client negotiated %q; want %s", got.ProtocolVersion, version)
		}
		return got
	}
	text := func(r tsConsentRun, i int) string {
		var parts []string
		for _, c := range r.Calls[i].Content {
			parts = append(parts, c.Text)
		}
		return strings.Join(parts, "\n")
	}

	got := run([]string{"allow_once", "deny", "allow_always"}, up.URL+"/1", up.URL+"/2", up.URL+"/3", up.URL+"/4")
	if len(got.Asked) != 3 {
		t.Fatalf("asked %d questions; want 3 (allow_once, deny, allow_always; none after it)", len(got.Asked))
	}
	for _, q := range got.Asked {
		enum := q.Schema.Properties["decision"].Enum
		if !strings.Contains(q.Message, `Plugin "fetch"`) || !strings.Contains(q.Message, target) ||
			len(q.Schema.Properties) != 1 || strings.Join(enum, ",") != "allow_once,allow_always,deny" {
			t.Errorf("question %+v; want the plugin, %s and one decision enum", q, target)
		}
	}
	for i, want := range []bool{false, true, false, false} {
		if got.Calls[i].IsError != want {
			t.Errorf("call %d: isError %v; want %v (%q)", i+1, got.Calls[i].IsError, want, text(got, i))
		}
	}
	if !strings.Contains(text(got, 1), "a person denied it") {
		t.Errorf("the denied call says %q; want the refusal", text(got, 1))
	}
	if n := up.Hits.Load(); n != 3 {
		t.Errorf("upstream got %d requests; want 3", n)
	}
	again := run(nil, up.URL+"/5")
	if len(again.Asked) != 0 || again.Calls[0].IsError {
		t.Errorf("a new process: asked %d, result %q; want the grant to hold without a question", len(again.Asked), text(again, 0))
	}
}

// TestConsentPath drives the real `mcphost serve`, in both eras, over stdio
// and Streamable HTTP, with the files example serving a directory its
// may_request_paths names (read-only): reading a file asks a person naming
// the plugin, the directory and read; allow_once reads it, deny refuses
// without the file's content, and allow_always reads it and keeps a read
// grant that a new process honours without asking.
func TestConsentPath(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the files example and runs mcphost serve")
	}
	src, err := filepath.Abs(filepath.Join("..", "..", "examples", "files"))
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(version+"/"+transport, func(t *testing.T) {
				dir := t.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "note.txt"), []byte("a private note"), 0o644); err != nil {
					t.Fatal(err)
				}
				conf := filepath.Join(t.TempDir(), "plugins.toml")
				body := fmt.Sprintf("[server]\nstartup_wait = \"180s\"\n\n[[plugin]]\nname = \"files\"\nsource = %s\ntimeout = \"5s\"\nconfig = { root = \"/data\" }\nmay_request_paths = [%s]\n",
					systest.Quote(src), systest.Quote(dir+":/data:ro"))
				if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				read := func(cs *mcp.ClientSession) (string, bool) {
					t.Helper()
					res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "files_read_file", Arguments: map[string]any{"path": "note.txt"}})
					if err != nil {
						t.Fatalf("tools/call files_read_file: %v", err)
					}
					return systest.TextOf(t, res), res.IsError
				}
				p := &systest.Person{Withdrawn: make(chan struct{})}
				cs := connectConsent(t, version, transport, conf, p)
				// questions counts the questions about dir so far (listing
				// resources may ask too; those are not counted here).
				questions := func() int {
					n := 0
					for _, m := range p.Asked() {
						if strings.Contains(m, "read files in "+dir) {
							if !strings.Contains(m, `Plugin "files"`) {
								t.Errorf("question %q; want it to name plugin \"files\"", m)
							}
							n++
						}
					}
					return n
				}
				p.Say("allow_once")
				if text, isErr := read(cs); isErr || text != "a private note" {
					t.Fatalf("allow_once: got %q (isError %v); want the file", text, isErr)
				}
				if n := questions(); n != 1 {
					t.Fatalf("allow_once: %d questions about %s; want 1 (%q)", n, dir, p.Asked())
				}
				p.Say("deny")
				if text, isErr := read(cs); !isErr || strings.Contains(text, "a private note") {
					t.Errorf("deny: got %q (isError %v); want a refusal", text, isErr)
				}
				if n := questions(); n != 2 {
					t.Errorf("deny: %d questions about %s; want 2", n, dir)
				}
				p.Say("allow_always")
				if text, isErr := read(cs); isErr || text != "a private note" {
					t.Fatalf("allow_always: got %q (isError %v); want the file", text, isErr)
				}
				g, err := consent.OpenGrants(consent.GrantsFile(conf))
				if err != nil {
					t.Fatal(err)
				}
				if list := g.List(); len(list) != 1 || list[0].Plugin != "files" || list[0].Path != dir || list[0].Access != consent.AccessRead {
					t.Errorf("plugins.grants.toml holds %+v; want files → read %s", list, dir)
				}
				p2 := &systest.Person{}
				cs2 := connectConsent(t, version, transport, conf, p2)
				if text, isErr := read(cs2); isErr || text != "a private note" {
					t.Fatalf("after a restart: got %q (isError %v)", text, isErr)
				}
				if q := p2.Asked(); len(q) != 0 {
					t.Errorf("after a restart: asked %q; want no question", q)
				}
			})
		}
	}
}
