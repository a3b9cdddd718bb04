package core

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The end-to-end tests drive the real `mcphost serve` subprocess over stdio
// with the official MCP Go SDK client.

func TestEndToEndOfficialClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs real plugins")
	}
	logs := make(chan *mcp.LoggingMessageParams, 64)
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) { logs <- r.Params },
	})
	s := systest.StartServer(t, client, "--config", "testdata/e2e/plugins.toml", "--no-watch")
	ctx := context.Background()
	cs := s.Session

	init := cs.InitializeResult()
	if init.ProtocolVersion != "2025-11-25" {
		t.Errorf("protocolVersion = %q; want 2025-11-25", init.ProtocolVersion)
	}
	if init.ServerInfo == nil || init.ServerInfo.Name != "mcphost-e2e" {
		t.Errorf("serverInfo = %+v; want name mcphost-e2e", init.ServerInfo)
	}
	if !strings.Contains(init.Instructions, "End-to-end") {
		t.Errorf("instructions = %q", init.Instructions)
	}
	caps := init.Capabilities
	if caps.Tools == nil || !caps.Tools.ListChanged || caps.Resources == nil || !caps.Resources.Subscribe ||
		caps.Prompts == nil || caps.Logging == nil || caps.Completions == nil {
		t.Errorf("capabilities = %+v; want tools, resources(subscribe), prompts, logging, completions", caps)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatalf("ping: %v", err)
	}

	// Every list, through the iterators (page_size is 3, so cursors are used).
	tools := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		tools[tool.Name] = tool
	}
	for _, name := range []string{"hash_sha256", "hash_calc", "files_read_file", "faulty_panic", "faulty_echo"} {
		if tools[name] == nil {
			t.Errorf("tools/list lacks %s (got %d tools)", name, len(tools))
		}
	}
	if len(tools) <= 3 {
		t.Errorf("got %d tools; want more than one page", len(tools))
	}
	var resources []*mcp.Resource
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatalf("resources/list: %v", err)
		}
		resources = append(resources, r)
	}
	helloURI := ""
	for _, r := range resources {
		if strings.HasSuffix(r.URI, "/hello.txt") {
			helloURI = r.URI
		}
	}
	if helloURI == "" {
		t.Fatalf("resources/list has no hello.txt: %+v", resources)
	}
	var templates []*mcp.ResourceTemplate
	for tp, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatalf("resources/templates/list: %v", err)
		}
		templates = append(templates, tp)
	}
	if len(templates) == 0 {
		t.Error("resources/templates/list is empty; want the files template")
	}
	prompts := map[string]*mcp.Prompt{}
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			t.Fatalf("prompts/list: %v", err)
		}
		prompts[p.Name] = p
	}
	if prompts["summarize_file"] == nil {
		t.Errorf("prompts/list lacks summarize_file: %v", prompts)
	}

	// A call, with structured output.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hash_sha256", Arguments: map[string]any{"text": "hello"}})
	if err != nil {
		t.Fatalf("tools/call hash_sha256: %v", err)
	}
	const helloSHA256 = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
	if res.IsError || !strings.Contains(systest.TextOf(t, res), helloSHA256) {
		t.Errorf("hash_sha256(hello) = %+v; want %s", res, helloSHA256)
	}
	if sc, _ := json.Marshal(res.StructuredContent); !strings.Contains(string(sc), helloSHA256) {
		t.Errorf("structuredContent = %s; want the hex digest", sc)
	}

	// Invalid arguments: an isError result that says what is wrong.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "hash_sha256", Arguments: map[string]any{"txet": 1}})
	if err != nil {
		t.Fatalf("tools/call with bad args: %v", err)
	}
	if !res.IsError || !strings.Contains(systest.TextOf(t, res), "text") {
		t.Errorf("bad args result = %q (isError %v); want isError naming the missing property", systest.TextOf(t, res), res.IsError)
	}

	// A read, exact and through the template.
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: helloURI})
	if err != nil {
		t.Fatalf("resources/read %s: %v", helloURI, err)
	}
	if len(rr.Contents) != 1 || !strings.Contains(rr.Contents[0].Text, "Hello from the e2e data directory.") {
		t.Errorf("read %s = %+v", helloURI, rr.Contents)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "nothing://here"}); err == nil || !strings.Contains(err.Error(), "-32002") && !strings.Contains(strings.ToLower(err.Error()), "not found") {
		t.Errorf("read of an unknown resource: err = %v; want resource not found (-32002)", err)
	}

	// A prompt and a completion.
	pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "summarize_file", Arguments: map[string]string{"path": "hello.txt"}})
	if err != nil {
		t.Fatalf("prompts/get: %v", err)
	}
	if blob, _ := json.Marshal(pr.Messages); !strings.Contains(string(blob), "Hello from the e2e data directory.") {
		t.Errorf("prompts/get summarize_file = %s; want the file embedded", blob)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "summarize_file"}); err == nil {
		t.Error("prompts/get without its required argument succeeded; want -32602")
	}
	cr, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "summarize_file"},
		Argument: mcp.CompleteParamsArgument{Name: "path", Value: "hel"},
	})
	if err != nil {
		t.Fatalf("completion/complete: %v", err)
	}
	if !contains(cr.Completion.Values, "hello.txt") {
		t.Errorf("completion values = %v; want hello.txt", cr.Completion.Values)
	}

	// A trap becomes an isError result naming plugin, tool and cause; the
	// plugin then still works.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "faulty_panic", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("tools/call faulty_panic: protocol error %v; want an isError result", err)
	}
	if got := systest.TextOf(t, res); !res.IsError || !strings.Contains(got, "faulty") || !strings.Contains(got, "panic") || !strings.Contains(got, "trap") {
		t.Errorf("faulty_panic = %q (isError %v); want isError naming plugin, tool and trap", got, res.IsError)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "faulty_echo", Arguments: map[string]any{"text": "still here"}})
	if err != nil || res.IsError || !strings.Contains(systest.TextOf(t, res), "still here") {
		t.Errorf("faulty_echo after a trap = %+v %q, %v; want it to work", res, systest.TextOf(t, res), err)
	}

	// A malformed line is answered with -32700, and the session goes on.
	if err := s.Stdin.Inject(`{"jsonrpc":"2.0","id":`); err != nil {
		t.Fatal(err)
	}
	select {
	case line := <-s.Diverted:
		if !bytes.Contains(line, []byte(`-32700`)) {
			t.Errorf("answer to a malformed line = %s; want -32700", line)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no answer to a malformed line")
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "hash_sha256", Arguments: map[string]any{"text": "hello"}})
	if err != nil || res.IsError || !strings.Contains(systest.TextOf(t, res), helloSHA256) {
		t.Errorf("call after a malformed line = %+v, %v; want success", res, err)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
