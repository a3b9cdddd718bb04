package inproc_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/inproc"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
)

// One tools/call through the whole server, in process: a registry with one
// plugin (here a native module standing in for a Wasm one), a host.Server
// over it, and inproc.Call, which initializes a private connection and
// returns the JSON-RPC response. `mcphost call` works the same way.
func ExampleCall() {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

	cfg := config.DefaultConfig()
	cfg.Plugins = []config.Spec{{Name: "greeter", Native: plugins.NativeModule(map[string]func(context.Context, []byte) ([]byte, error){
		abi.ExportListTools: func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"tools":[{"name":"hello","inputSchema":{"type":"object"}}]}`), nil
		},
		abi.ExportCallTool: func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"content":[{"type":"text","text":"hello from a plugin"}]}`), nil
		},
	})}}
	gen, err := plugins.NewLoader(plugins.LoaderOptions{Logger: quiet}).Build(ctx, cfg, nil)
	if err != nil {
		panic(err)
	}
	reg := plugins.NewRegistry()
	reg.Swap(ctx, gen)
	defer reg.Close(ctx)
	srv := host.New(reg, host.Options{Logger: quiet})
	defer srv.Close()

	// The tool is named after its plugin: greeter_hello.
	resp, err := inproc.Call(ctx, srv, "tools/call", json.RawMessage(`{"name":"greeter_hello","arguments":{}}`), nil)
	if err != nil {
		panic(err)
	}
	var r struct {
		Result abi.CallToolResult `json:"result"`
	}
	if err := json.Unmarshal(resp, &r); err != nil {
		panic(err)
	}
	fmt.Println(r.Result.Content[0].Text)
	// Output: hello from a plugin
}
