package host

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/internal/sigtest"
	"github.com/mcphost/mcphost/internal/wasmgen"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/sandbox"
)

func TestAuditLog(t *testing.T) {
	var audit lockedBuffer
	srv := newServer(t, newFixture(), Options{Audit: &audit})
	in := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`not json`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_echo","arguments":{"msg":"audited"}}}`,
	}
	out := runLines(t, srv, in)
	outLines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")

	type entry struct {
		Time    string          `json:"time"`
		Dir     string          `json:"dir"`
		Session string          `json:"session"`
		Msg     json.RawMessage `json:"msg"`
	}
	var got []entry
	for _, line := range bytes.Split(bytes.TrimSuffix(audit.Bytes(), []byte("\n")), []byte("\n")) {
		var e entry
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("audit line %q is not JSON: %v", line, err)
		}
		if _, err := time.Parse(time.RFC3339Nano, e.Time); err != nil {
			t.Errorf("audit time %q: %v", e.Time, err)
		}
		got = append(got, e)
	}
	// Every message in and out, in order: in, out, in (bad), out (-32700),
	// in (notification), in, out.
	wantDirs := []string{"in", "out", "in", "out", "in", "in", "out"}
	if len(got) != len(wantDirs) {
		t.Fatalf("got %d audit entries; want %d:\n%s", len(got), len(wantDirs), audit.Bytes())
	}
	ins, outs := 0, 0
	for i, e := range got {
		if e.Dir != wantDirs[i] || e.Session != got[0].Session || e.Session == "" {
			t.Errorf("entry %d: got dir %q session %q; want dir %q and one non-empty session", i, e.Dir, e.Session, wantDirs[i])
		}
		var want string
		if e.Dir == "in" {
			want, ins = in[ins], ins+1
		} else {
			want, outs = outLines[outs], outs+1
		}
		if want == "not json" {
			want = `"not json"` // recorded as a JSON string
		}
		if string(e.Msg) != want {
			t.Errorf("entry %d: got msg %s; want %s", i, e.Msg, want)
		}
	}
}

// TestAuditNamesTheCode: the audit record of the answer to a tools/call,
// resources/read or prompts/get names the plugin that answered and the
// SHA-256 of its code (a Wasm file here; an in-process module has none),
// and its signer when it was verified against a [plugin.signature] table
// (a url plugin signed with a key); a batch's answer names each
// element's; answers no plugin served name none.
func TestAuditNamesTheCode(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	signed := wasmgen.Module(
		wasmgen.Func{Name: abi.ExportListTools, Output: `{"tools":[{"name":"hi","inputSchema":{"type":"object"}}]}`},
		wasmgen.Func{Name: abi.ExportCallTool, Output: `{"content":[{"type":"text","text":"signed"}]}`},
	)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	sigtest.WritePublicKey(t, filepath.Join(dir, "cosign.pub"), key.Public())
	files := map[string][]byte{"/s.wasm": signed, "/s.wasm.sigstore.json": sigtest.KeyBundle(t, key, signed)}
	web := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, ok := files[r.URL.Path]; ok {
			w.Write(b)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(web.Close)
	wasm := wasmgen.Module(
		wasmgen.Func{Name: abi.ExportListTools, Output: `{"tools":[{"name":"hi","inputSchema":{"type":"object"}}]}`},
		wasmgen.Func{Name: abi.ExportCallTool, Output: `{"content":[{"type":"text","text":"from wasm"}]}`},
		wasmgen.Func{Name: abi.ExportListResources, Output: `{"resources":[{"uri":"mem://x","name":"x"}]}`},
		wasmgen.Func{Name: abi.ExportReadResource, Output: `{"contents":[{"uri":"mem://x","text":"x"}]}`},
		wasmgen.Func{Name: abi.ExportListPrompts, Output: `{"prompts":[{"name":"p"}]}`},
		wasmgen.Func{Name: abi.ExportGetPrompt, Output: `{"messages":[{"role":"user","content":{"type":"text","text":"p"}}]}`},
	)
	file := filepath.Join(dir, "gen.wasm")
	if err := os.WriteFile(file, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(wasm)
	digest := hex.EncodeToString(sum[:])
	engine, err := sandbox.NewEngine(ctx, sandbox.EngineOptions{CacheDir: filepath.Join(dir, "wazero"), Logger: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close(ctx) })
	cfg, err := config.ParseConfig(filepath.Join(dir, "plugins.toml"), []byte(
		"[[plugin]]\nname = \"signed\"\nurl = \""+web.URL+"/s.wasm\"\n[plugin.signature]\nkey = \"cosign.pub\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Plugins = append(cfg.Plugins, config.Spec{Name: "gen", Path: file}, config.Spec{Name: "test", Native: plugins.NativeModule(newFixture().TestExports()), TaskTools: []string{"progress"}})
	g, err := plugins.NewLoader(plugins.LoaderOptions{Engine: engine, Logger: quietLog, HTTPClient: web.Client(),
		DownloadCacheDir: filepath.Join(dir, "dl")}).Build(ctx, cfg, nil)
	if err != nil || len(g.Failures) > 0 {
		t.Fatalf("build: %v %v", err, g.Failures)
	}
	reg := plugins.NewRegistry()
	reg.Swap(ctx, g)
	t.Cleanup(func() { reg.Close(ctx) })

	type record struct {
		Dir    string          `json:"dir"`
		Plugin string          `json:"plugin"`
		SHA256 string          `json:"sha256"`
		Signer json.RawMessage `json:"signer"`
		Served []struct {
			ID     json.RawMessage `json:"id"`
			Plugin string          `json:"plugin"`
			SHA256 string          `json:"sha256"`
		} `json:"served"`
		Msg json.RawMessage `json:"msg"`
	}
	// answers runs lines, after an initialize for version unless it is
	// "" (the stateless era), and returns the answers' records by id.
	answers := func(t *testing.T, version string, lines ...string) map[string]record {
		t.Helper()
		var audit lockedBuffer
		srv := New(reg, Options{Audit: &audit, Logger: quietLog})
		t.Cleanup(srv.Close)
		in := lines
		if version != "" {
			in = append([]string{
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			}, lines...)
		}
		runLines(t, srv, in)
		out := map[string]record{}
		for _, line := range bytes.Split(bytes.TrimSuffix(audit.Bytes(), []byte("\n")), []byte("\n")) {
			var r record
			if err := json.Unmarshal(line, &r); err != nil {
				t.Fatalf("audit line %s: %v", line, err)
			}
			switch {
			case r.Dir != "out":
			case bytes.HasPrefix(r.Msg, []byte("[")):
				out["batch"] = r
			default:
				out[string(jsonrpc.Member(r.Msg, "id"))] = r
			}
		}
		return out
	}

	got := answers(t, "2025-11-25",
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gen_hi","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"mem://x"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"p"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"test_echo","arguments":{"msg":"native"}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nope","arguments":{}}}`,
	)
	for _, tc := range []struct{ id, plugin, sha256 string }{
		{"1", "", ""}, // initialize
		{"2", "gen", digest},
		{"3", "gen", digest},
		{"4", "gen", digest},
		{"5", "test", ""}, // in process: no code of its own
		{"6", "", ""},
		{"7", "", ""}, // unknown tool: no plugin answered
	} {
		r, ok := got[tc.id]
		if !ok || r.Plugin != tc.plugin || r.SHA256 != tc.sha256 || r.Signer != nil {
			t.Errorf("answer %s: got %+v (recorded %v); want plugin %q, sha256 %q, no signer", tc.id, r, ok, tc.plugin, tc.sha256)
		}
	}
	sum = sha256.Sum256(signed)
	signedDigest := hex.EncodeToString(sum[:])
	r := answers(t, "2025-11-25", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"signed_hi","arguments":{}}}`)["2"]
	var signer struct{ Key, Digest, From string }
	if err := json.Unmarshal(r.Signer, &signer); err != nil || r.Plugin != "signed" || r.SHA256 != signedDigest ||
		!strings.HasPrefix(signer.Key, "sha256:") || signer.Digest != "sha256:"+signedDigest || !strings.HasSuffix(signer.From, ".sigstore.json") {
		t.Errorf("answer of the signed plugin: got %+v, signer %s; want plugin signed, sha256 %s and its key's signature", r, r.Signer, signedDigest)
	}

	// A task's result is the tool's answer too.
	task := answers(t, "",
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_progress","arguments":{},`+tasksCaps+`}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"$TASK",`+tasksCaps+`}}`)
	for _, id := range []string{"2", "3"} {
		if r := task[id]; r.Plugin != "test" || !bytes.Contains(r.Msg, []byte(`"taskId"`)) {
			t.Errorf("task answer %s: got %+v; want plugin test", id, r)
		}
	}

	batch := answers(t, "2025-03-26",
		`[{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"gen_hi","arguments":{}}},{"jsonrpc":"2.0","id":11,"method":"tools/list"},{"jsonrpc":"2.0","id":12,"method":"prompts/get","params":{"name":"p"}}]`)
	r = batch["batch"]
	if len(r.Served) != 2 || string(r.Served[0].ID) != "10" || string(r.Served[1].ID) != "12" ||
		r.Served[0].Plugin != "gen" || r.Served[0].SHA256 != digest || r.Served[1].Plugin != "gen" || r.Plugin != "" {
		t.Errorf("batch answer: got %+v; want served by gen for ids 10 and 12 only", r)
	}
}
