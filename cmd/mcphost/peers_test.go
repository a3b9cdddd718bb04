package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"os/exec"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The peers BenchmarkPeers measures mcphost against. Each is an echo tool
// named wasm_echo served over stdio, written the way its README shows, and
// runs as this test binary started again with peerEnv naming it (so the
// peers' modules are test dependencies like any other).
//
//   - limit: a hand-written JSON-RPC loop answering with a constant, the
//     ceiling for any server over the same pipes;
//   - gosdk: the official MCP Go SDK, mcp.AddTool with a typed handler;
//   - mcpgo: mark3labs/mcp-go, what a Go author would pick instead of a
//     plugin, s.AddTool with request.RequireString.
const peerEnv = "MCPHOST_BENCH_PEER"

var peerServers = map[string]func(){
	"limit": serveLimit,
	"gosdk": serveGoSDK,
	"mcpgo": serveMCPGo,
}

func TestMain(m *testing.M) {
	if name := os.Getenv(peerEnv); name != "" {
		serve := peerServers[name]
		if serve == nil {
			log.Fatalf("%s=%q: no such peer", peerEnv, name)
		}
		serve()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// peerCommand is the command that serves the peer called name.
func peerCommand(name string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), peerEnv+"="+name)
	return cmd
}

func serveLimit() {
	r := bufio.NewReaderSize(os.Stdin, 64<<10)
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &req) != nil || req.ID == nil {
			continue
		}
		w.WriteString(`{"jsonrpc":"2.0","id":`)
		w.Write(req.ID)
		if req.Method == "initialize" {
			w.WriteString(`,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"limit","version":"1"}}}` + "\n")
		} else {
			w.WriteString(`,"result":{"content":[{"type":"text","text":"hello world"}]}}` + "\n")
		}
		if r.Buffered() == 0 {
			w.Flush()
		}
	}
}

type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

func serveGoSDK() {
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdk", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "wasm_echo", Description: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

func serveMCPGo() {
	s := mcpgoserver.NewMCPServer("mcpgo", "1", mcpgoserver.WithToolCapabilities(false))
	tool := mcpgo.NewTool("wasm_echo",
		mcpgo.WithDescription("echo"),
		mcpgo.WithString("text", mcpgo.Required(), mcpgo.Description("the text to echo")),
	)
	s.AddTool(tool, func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		text, err := req.RequireString("text")
		if err != nil {
			return mcpgo.NewToolResultError(err.Error()), nil
		}
		return mcpgo.NewToolResultText(text), nil
	})
	if err := mcpgoserver.ServeStdio(s); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// TestPeers checks that every peer of BenchmarkPeers answers the echo call
// through the benchmark's real-like client, so the benchmark cannot go
// stale unnoticed.
func TestPeers(t *testing.T) {
	for name := range peerServers {
		t.Run(name, func(t *testing.T) {
			p := startBenchServer(t, name, peerCommand(name), "wasm_echo")
			defer p.stop()
			c := newRealClient(p)
			for i := range 3 {
				if err := c.call(); err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
			}
		})
	}
}
