package systest

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func CheckEra(t *testing.T, cs *mcp.ClientSession, version string) {
	ctx := context.Background()
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Errorf("protocol version = %s; want %s", got, version)
	}
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "test_simple_text") || !slices.Contains(names, "test_sampling") {
		t.Errorf("tools/list = %v; want test_simple_text and test_sampling", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_simple_text"})
	if err != nil || TextOf(t, res) != "This is a simple text response for testing." {
		t.Errorf("test_simple_text: %v %+v", err, res)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://static-text"})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text == "" {
		t.Errorf("resources/read test://static-text: %v %+v", err, rr)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_sampling", Arguments: map[string]any{"prompt": "2+2?"}})
	if err != nil || TextOf(t, res) != "LLM response: sampled" {
		t.Errorf("test_sampling: %v %+v", err, res)
	}
}

// ConnectHTTP runs `mcphost serve --http 127.0.0.1:0 args…`, reads the
// address from its listening line and connects client to it.
func ConnectHTTP(t *testing.T, client *mcp.Client, version string, args ...string) *mcp.ClientSession {
	t.Helper()
	ctx, url := ServeHTTP(t, args...)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// ServeHTTP runs `mcphost serve --http 127.0.0.1:0 args…` until the test
// ends and returns its endpoint's URL, with a context that bounds the test.
func ServeHTTP(t *testing.T, args ...string) (context.Context, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, Binary(t), append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	addr := ListeningAddr(stderr, "/mcp")
	var url string
	select {
	case url = <-addr:
	case <-ctx.Done():
		t.Fatal("no listening line on stderr")
	}
	return ctx, url
}
