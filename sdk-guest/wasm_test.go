package guest_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk-guest/internal/wasmrun"
)

// These tests build real plugins with GOOS=wasip1 GOARCH=wasm
// -buildmode=c-shared and run them under the Extism Go SDK, so the SDK's
// Wasm side (exports, kernel memory transfers, host functions, config,
// HTTP) is exercised for real. -short skips them.

func TestMain(m *testing.M) {
	code := m.Run()
	wasmrun.Cleanup()
	os.Exit(code)
}

// example builds examples/name for wasip1.
func example(t *testing.T, name string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds wasm modules")
	}
	return wasmrun.Build(t, filepath.Join("..", "examples", name))
}

// runnable builds examples/name and skips the test when modules cannot be
// run in reasonable time (under -race).
func runnable(t *testing.T, name string) string {
	t.Helper()
	wasm := example(t, name)
	if raceEnabled {
		t.Skip("compiling a Go module with wazero under -race takes too long; run without -race")
	}
	return wasm
}

// call runs export with a JSON request and decodes the output into out.
func call(t *testing.T, p *wasmrun.Plugin, export, request string, out any) {
	t.Helper()
	in := `{"context":{"id":1}}`
	if request != "" {
		in = `{"request":` + request + `,"context":{"id":1,"_meta":{"progressToken":"tok"}}}`
	}
	rc, b, err := p.Call(export, []byte(in))
	if err != nil || rc != 0 {
		t.Fatalf("%s %s: rc %d, err %v, stderr %s", export, request, rc, err, p.Stderr())
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s %s: output %q: %v", export, request, b, err)
	}
}

func TestWasmBuildExamples(t *testing.T) {
	for _, name := range []string{"echo", "hashtools", "files", "fetch", "faulty", "conformance", "palette"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			wasm := runnable(t, name)
			p := wasmrun.Load(t, wasm, wasmrun.Options{})
			for _, e := range []string{abi.ExportListTools, abi.ExportCallTool, abi.ExportListResources, abi.ExportListResourceTemplates,
				abi.ExportReadResource, abi.ExportListPrompts, abi.ExportGetPrompt, abi.ExportComplete, abi.ExportABIVersion} {
				if !p.Has(e) {
					t.Errorf("%s does not export %s", name, e)
				}
			}
			if p.Has(abi.ExportDescribe) && p.Has(abi.ExportCall) {
				t.Errorf("%s looks like a v1 module", name)
			}
			rc, _, err := p.Call(abi.ExportABIVersion, nil)
			if err != nil || rc != abi.Version {
				t.Errorf("mcphost_abi_version = %d, %v; want %d", rc, err, abi.Version)
			}
			var lt abi.ListToolsResult
			call(t, p, abi.ExportListTools, "", &lt)
			if len(lt.Tools) == 0 {
				t.Errorf("%s lists no tools", name)
			}
		})
	}
}

func TestWasmEcho(t *testing.T) {
	p := wasmrun.Load(t, runnable(t, "echo"), wasmrun.Options{})
	// Sizes around the 8-byte transfer unit, and a large one.
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 100_003} {
		text := strings.Repeat("é", n/2) + strings.Repeat("x", n%2)
		req, _ := json.Marshal(map[string]any{"name": "echo", "arguments": map[string]string{"text": text}})
		var res abi.CallToolResult
		call(t, p, abi.ExportCallTool, string(req), &res)
		if len(res.Content) != 1 || res.Content[0].Text != text {
			t.Errorf("echo of %d bytes came back as %.60v", len(text), res.Content)
		}
	}
	rc, _, err := p.Call(abi.ExportCallTool, []byte(`{"request":`))
	if err == nil || rc != 1 || !strings.Contains(err.Error(), "invalid input JSON") {
		t.Errorf("bad input: rc %d, err %v; want rc 1 and an invalid-input error", rc, err)
	}
	rc, _, err = p.Call(abi.ExportCallTool, []byte(`{"request":{"name":"nope"}}`))
	if err == nil || rc != 1 || !strings.Contains(err.Error(), `unknown tool "nope"`) {
		t.Errorf("unknown tool: rc %d, err %v; want rc 1 and unknown tool", rc, err)
	}
	var res abi.CallToolResult // the instance still works after guest errors
	call(t, p, abi.ExportCallTool, `{"name":"echo","arguments":{"text":"ok"}}`, &res)
	if res.Content[0].Text != "ok" {
		t.Errorf("echo after errors = %+v", res)
	}
}

func TestWasmFaulty(t *testing.T) {
	wasm := runnable(t, "faulty")
	tests := []struct {
		name    string
		export  string
		request string
		opts    wasmrun.Options
		// want* are substrings of the error, the stderr and the output
		wantErr, wantStderr, wantOut string
		rc                           uint32
	}{
		{name: "echo", export: abi.ExportCallTool, request: `{"name":"echo","arguments":{"text":"hi"}}`, wantOut: `"text":"hi"`},
		{name: "recovered_panic", export: abi.ExportCallTool, request: `{"name":"recovered_panic"}`,
			wantOut: `"isError":true`},
		{name: "panic", export: abi.ExportCallTool, request: `{"name":"panic"}`, rc: 1,
			wantErr: "unreachable", wantStderr: "nil pointer dereference"},
		{name: "trap resource", export: abi.ExportReadResource, request: `{"uri":"faulty://trap"}`, rc: 1,
			wantErr: "unreachable", wantStderr: "nil pointer dereference"},
		{name: "trap prompt", export: abi.ExportGetPrompt, request: `{"name":"trap"}`, rc: 1,
			wantErr: "unreachable", wantStderr: "nil pointer dereference"},
		{name: "stack_overflow", export: abi.ExportCallTool, request: `{"name":"stack_overflow"}`, rc: 1,
			wantErr: "unreachable", wantStderr: "stack overflow"},
		{name: "loop", export: abi.ExportCallTool, request: `{"name":"loop"}`, opts: wasmrun.Options{Timeout: 300 * time.Millisecond},
			rc: 0xEFFFFFFF, wantErr: "deadline exceeded"},
		{name: "eat", export: abi.ExportCallTool, request: `{"name":"eat"}`, opts: wasmrun.Options{MaxPages: 512, Timeout: time.Minute},
			rc: 1, wantErr: "unreachable", wantStderr: "out of memory"},
		{name: "junk", export: abi.ExportCallTool, request: `{"name":"junk"}`, wantOut: `{"content":[{"type":"text","text":"unterminated`},
		{name: "big", export: abi.ExportCallTool, request: `{"name":"big","arguments":{"bytes":300000}}`, wantOut: strings.Repeat("x", 300000)},
		{name: "slow", export: abi.ExportCallTool, request: `{"name":"slow","arguments":{"ms":30}}`, wantOut: "slept "},
		{name: "exit", export: abi.ExportCallTool, request: `{"name":"exit","arguments":{"code":7}}`, rc: 7, wantErr: "exit_code(7)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := wasmrun.Load(t, wasm, tt.opts)
			rc, out, err := p.Call(tt.export, []byte(`{"request":`+tt.request+`,"context":{}}`))
			if rc != tt.rc {
				t.Errorf("rc = %#x; want %#x (err %v)", rc, tt.rc, err)
			}
			if (tt.wantErr == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %v; want %q", err, tt.wantErr)
			}
			if !strings.Contains(p.Stderr(), tt.wantStderr) {
				t.Errorf("stderr = %.300s; want %q", p.Stderr(), tt.wantStderr)
			}
			if !strings.Contains(string(out), tt.wantOut) {
				t.Errorf("output = %.200s; want %.60q", out, tt.wantOut)
			}
		})
	}
}

func TestWasmHostFunctions(t *testing.T) {
	p := wasmrun.Load(t, runnable(t, "conformance"), wasmrun.Options{Replies: map[string]func([]byte) []byte{
		abi.HostSample: func([]byte) []byte {
			return []byte(`{"role":"assistant","content":{"type":"text","text":"This is a test response from the client"},"model":"test-model"}`)
		},
		abi.HostElicit: func([]byte) []byte { return []byte(`{"error":"elicitation is not supported"}`) },
	}})
	tests := []struct{ request, want string }{
		{`{"name":"test_tool_with_logging"}`, "Tool with logging executed successfully"},
		{`{"name":"test_tool_with_progress"}`, "tok"},
		{`{"name":"test_sampling","arguments":{"prompt":"Test prompt for sampling"}}`, "LLM response: This is a test response from the client"},
		{`{"name":"test_elicitation","arguments":{"message":"m"}}`, "Elicitation not supported or error: host create_elicitation: elicitation is not supported"},
	}
	for _, tt := range tests {
		var res abi.CallToolResult
		call(t, p, abi.ExportCallTool, tt.request, &res)
		if len(res.Content) != 1 || res.Content[0].Text != tt.want {
			t.Errorf("%s = %+v; want %q", tt.request, res.Content, tt.want)
		}
	}
	var got []string
	for _, c := range p.Calls() {
		got = append(got, c.Name+" "+string(c.Payload))
	}
	want := []string{
		abi.HostLog + ` {"level":"info","data":"Tool execution started"}`,
		abi.HostLog + ` {"level":"info","data":"Tool processing data"}`,
		abi.HostLog + ` {"level":"info","data":"Tool execution completed"}`,
		abi.HostProgress + ` {"progressToken":"tok","progress":0,"total":100,"message":"Completed step 0 of 100"}`,
		abi.HostProgress + ` {"progressToken":"tok","progress":50,"total":100,"message":"Completed step 50 of 100"}`,
		abi.HostProgress + ` {"progressToken":"tok","progress":100,"total":100,"message":"Completed step 100 of 100"}`,
		abi.HostSample + ` {"messages":[{"role":"user","content":{"type":"text","text":"Test prompt for sampling"}}],"maxTokens":100}`,
		abi.HostElicit + ` {"message":"m","requestedSchema":{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("host calls:\ngot\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	var rr abi.ReadResourceResult
	call(t, p, abi.ExportReadResource, `{"uri":"test://template/123/data"}`, &rr)
	if len(rr.Contents) != 1 || rr.Contents[0].Text != `{"id":"123","templateTest":true,"data":"Data for ID: 123"}` {
		t.Errorf("template read = %+v", rr)
	}
	var cr abi.CompleteResult
	call(t, p, abi.ExportComplete, `{"ref":{"type":"prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg1","value":"test"}}`, &cr)
	if len(cr.Completion.Values) != 2 {
		t.Errorf("completion = %+v; want 2 values", cr)
	}
}

func TestWasmFiles(t *testing.T) {
	wasm := runnable(t, "files")
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes", "a.md"), []byte("# A"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := wasmrun.Load(t, wasm, wasmrun.Options{AllowedPaths: map[string]string{dir: "/data"}})
	var lr abi.ListResourcesResult
	call(t, p, abi.ExportListResources, "", &lr)
	if len(lr.Resources) != 1 || lr.Resources[0].URI != "file:///data/notes/a.md" || lr.Resources[0].Name != "notes/a.md" {
		t.Errorf("list_resources = %+v; want file:///data/notes/a.md", lr)
	}
	var rr abi.ReadResourceResult
	call(t, p, abi.ExportReadResource, `{"uri":"file:///data/notes/a.md"}`, &rr)
	if len(rr.Contents) != 1 || rr.Contents[0].Text != "# A" || rr.Contents[0].MimeType != "text/markdown" {
		t.Errorf("read = %+v; want # A", rr)
	}
	var res abi.CallToolResult
	call(t, p, abi.ExportCallTool, `{"name":"read_file","arguments":{"path":"../etc/passwd"}}`, &res)
	if !res.IsError || !strings.Contains(res.Content[0].Text, "outside the served directory") {
		t.Errorf("read_file ../etc/passwd = %+v; want a refusal", res)
	}
	var lt abi.ListToolsResult
	call(t, p, abi.ExportListTools, "", &lt)
	for _, tl := range lt.Tools {
		if tl.Name == "write_file" {
			t.Errorf("write_file is listed without writable = true")
		}
	}

	// With writable = "true" (read through config_get while the module
	// initialises) write_file exists and works.
	w := wasmrun.Load(t, wasm, wasmrun.Options{AllowedPaths: map[string]string{dir: "/data"}, Config: map[string]string{"writable": "true"}})
	var wres abi.CallToolResult
	call(t, w, abi.ExportCallTool, `{"name":"write_file","arguments":{"path":"out/new.txt","content":"written by wasm"}}`, &wres)
	if wres.IsError {
		t.Fatalf("write_file = %+v", wres)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "out", "new.txt")); err != nil || string(b) != "written by wasm" {
		t.Errorf("file on the host = %q, %v; want the written text", b, err)
	}
}

func TestWasmFetch(t *testing.T) {
	wasm := runnable(t, "fetch")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.Error(w, "gone", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("X-Agent", r.UserAgent())
		w.Write([]byte("<h1>Hi</h1><p>from " + r.UserAgent() + "</p>"))
	}))
	defer srv.Close()
	p := wasmrun.Load(t, wasm, wasmrun.Options{AllowedHosts: []string{"127.0.0.1"}})

	var res abi.CallToolResult
	call(t, p, abi.ExportCallTool, `{"name":"fetch","arguments":{"url":"`+srv.URL+`/page"}}`, &res)
	if res.IsError || !strings.Contains(res.Content[0].Text, "Status: 200\nContent-Type: text/html\n\nHi\n\nfrom mcphost-fetch/1") {
		t.Errorf("fetch = %+v; want the page as text", res)
	}
	var missing abi.CallToolResult
	call(t, p, abi.ExportCallTool, `{"name":"fetch","arguments":{"url":"`+srv.URL+`/missing"}}`, &missing)
	if !missing.IsError || !strings.Contains(missing.Content[0].Text, "HTTP status 404") {
		t.Errorf("fetch /missing = %+v; want an isError 404", missing)
	}
	// A host outside allowed_hosts: guest.HTTP returns the refusal, and
	// the tool answers it as its error; the call does not fail.
	other := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	var refused abi.CallToolResult
	call(t, p, abi.ExportCallTool, `{"name":"fetch","arguments":{"url":"`+other+`/"}}`, &refused)
	if !refused.IsError || !strings.Contains(refused.Content[0].Text, "is not allowed") {
		t.Errorf("fetch of a disallowed host = %+v; want an isError result naming the refusal", refused)
	}
}

// BenchmarkWasmEcho is the cost of one call_tool of examples/echo under the
// stock Extism Go SDK: kernel transfers, JSON in the guest, SDK dispatch.
func BenchmarkWasmEcho(b *testing.B) {
	wasm := wasmrun.Build(b, filepath.Join("..", "examples", "echo"))
	p := wasmrun.Load(b, wasm, wasmrun.Options{})
	input := []byte(`{"request":{"name":"echo","arguments":{"text":"hello"}},"context":{"id":1}}`)
	if _, _, err := p.Call(abi.ExportCallTool, input); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := p.Call(abi.ExportCallTool, input); err != nil {
			b.Fatal(err)
		}
	}
}
