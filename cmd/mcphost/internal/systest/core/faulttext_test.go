package core

import (
	"context"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFaultText calls each of examples/faulty's faults through the whole
// stack and checks that the client reads what went wrong in the plugin's
// words, never the runtime's internals.
func TestFaultText(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs real plugins")
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "faults", Version: "1"}, nil)
	s := systest.StartServer(t, client, "--config", "testdata/e2e/plugins.toml", "--no-watch")
	ctx := context.Background()
	internals := []string{"wasm error", "recovered by wazero", "wasm stack trace", "runtime: ", "goroutine ", "sp=0x", "[recovered]"}
	for _, tt := range []struct {
		tool string
		want string // alternatives separated by |
	}{
		{"faulty_panic", `plugin "faulty" tool "panic": trap: panic: runtime error: invalid memory address or nil pointer dereference`},
		{"faulty_stack_overflow", `plugin "faulty" tool "stack_overflow": trap: stack overflow`},
		// Filling 128MiB may take longer than the 2s timeout on a busy machine.
		{"faulty_eat", `plugin "faulty" tool "eat": out of memory|plugin "faulty" tool "eat": timeout: exceeded 2s`},
		{"faulty_loop", `plugin "faulty" tool "loop": timeout: exceeded 2s`},
		{"faulty_exit", `plugin "faulty" tool "exit": exit: exit code 3`},
		{"faulty_recovered_panic", `panic in tool "recovered_panic": faulty: deliberate panic`},
		{"faulty_junk", `plugin "faulty" tool "junk": bad output: invalid JSON`},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			res, err := s.Session.CallTool(ctx, &mcp.CallToolParams{Name: tt.tool, Arguments: map[string]any{}})
			if err != nil {
				t.Fatalf("protocol error %v; want an isError result", err)
			}
			got := systest.TextOf(t, res)
			ok := false
			for _, w := range strings.Split(tt.want, "|") {
				ok = ok || strings.HasPrefix(got, w)
			}
			if !res.IsError || !ok {
				t.Errorf("got %q (isError %v); want isError starting %q", got, res.IsError, tt.want)
			}
			for _, bad := range internals {
				if strings.Contains(got, bad) {
					t.Errorf("got %q; want no runtime internals (%q)", got, bad)
				}
			}
		})
	}
}
