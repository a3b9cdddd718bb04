// Command benchpeer is a peer of BenchmarkPeers (cmd/mcphost/internal/systest/peers/peers_test.go):
// the echo tool wasm_echo served by go-sdk or mark3labs/mcp-go, written
// the way their READMEs show, with default options. Over stdio without
// -addr; with -addr, over Streamable HTTP: sessions on /mcp and the
// session-less form (each SDK's stateless option) on /stateless. It is a
// program of its own, not the test binary started again, so that its peak
// RSS is the SDK's and not the test binary's.
//
//	benchpeer -sdk gosdk|mcpgo [-addr 127.0.0.1:PORT]
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"net/http"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	sdk := flag.String("sdk", "", "gosdk or mcpgo")
	addr := flag.String("addr", "", "the loopback `host:port` to listen on")
	flag.Parse()
	if *addr == "" {
		serveStdio(*sdk)
		return
	}
	if host, _, err := net.SplitHostPort(*addr); err != nil || !net.ParseIP(host).IsLoopback() {
		log.Fatalf("-addr %q: want a loopback host:port", *addr)
	}
	mux := http.NewServeMux()
	switch *sdk {
	case "gosdk":
		s := goSDKServer()
		mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
		mux.Handle("/stateless", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true}))
	case "mcpgo":
		s := mcpGoServer()
		mux.Handle("/mcp", mcpgoserver.NewStreamableHTTPServer(s))
		mux.Handle("/stateless", mcpgoserver.NewStreamableHTTPServer(s, mcpgoserver.WithStateLess(true)))
	default:
		log.Fatalf("-sdk %q: want gosdk or mcpgo", *sdk)
	}
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

func serveStdio(sdk string) {
	switch sdk {
	case "gosdk":
		if err := goSDKServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			log.Fatal(err)
		}
	case "mcpgo":
		if err := mcpgoserver.ServeStdio(mcpGoServer()); err != nil {
			log.Fatal(err)
		}
	default:
		log.Fatalf("-sdk %q: want gosdk or mcpgo", sdk)
	}
}

type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

func goSDKServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "gosdk", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "wasm_echo", Description: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil, nil
	})
	return s
}

func mcpGoServer() *mcpgoserver.MCPServer {
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
	return s
}
