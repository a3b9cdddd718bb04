package host_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/stdio"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
)

// A Server answers MCP over any transport that hands it lines: here the
// stdio transport reads a whole session from memory and writes the
// responses to a buffer, as `echo … | mcphost` does over a pipe. The
// server serves the tools of the generation its Registry holds (one
// native module standing in for a Wasm plugin), named after their plugin.
// Requests run concurrently, so the responses are sorted by id. A call
// to a tool that does not exist is a protocol error; a tool that fails
// answers a result with isError set.
func ExampleServer() {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

	cfg := config.DefaultConfig()
	cfg.Plugins = []config.Spec{{Name: "greeter", Native: plugins.NativeModule(map[string]func(context.Context, []byte) ([]byte, error){
		abi.ExportListTools: func(context.Context, []byte) ([]byte, error) {
			return []byte(`{"tools":[{"name":"hello","description":"Says hello.","inputSchema":{"type":"object"}}]}`), nil
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

	session := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greeter_hello","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"greeter_bye","arguments":{}}}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	if err := stdio.Serve(ctx, srv, strings.NewReader(session), &out); err != nil {
		panic(err)
	}

	type response struct {
		ID     int `json:"id"`
		Result struct {
			ProtocolVersion string     `json:"protocolVersion"`
			Tools           []abi.Tool `json:"tools"`
			abi.CallToolResult
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	var rs []response
	for sc := bufio.NewScanner(&out); sc.Scan(); {
		var r response
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			panic(err)
		}
		rs = append(rs, r)
	}
	slices.SortFunc(rs, func(a, b response) int { return a.ID - b.ID })
	for _, r := range rs {
		switch {
		case r.Error != nil:
			fmt.Printf("%d: error: %s\n", r.ID, r.Error.Message)
		case r.Result.ProtocolVersion != "":
			fmt.Printf("%d: initialized, protocol %s\n", r.ID, r.Result.ProtocolVersion)
		case r.Result.Tools != nil:
			fmt.Printf("%d: tools: %s (%s)\n", r.ID, r.Result.Tools[0].Name, r.Result.Tools[0].Description)
		default:
			fmt.Printf("%d: isError=%v: %s\n", r.ID, r.Result.IsError, r.Result.Content[0].Text)
		}
	}
	// Output:
	// 1: initialized, protocol 2025-11-25
	// 2: tools: greeter_hello (Says hello.)
	// 3: isError=false: hello from a plugin
	// 4: error: unknown tool: greeter_bye
}
