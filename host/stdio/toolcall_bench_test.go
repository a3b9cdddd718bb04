package stdio

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
)

// BenchmarkToolCallBytes prices the host's own handling of a tool call's
// bulk: a tools/call with a small and a 1 MiB text argument over
// ServeStdio (io.Pipe), served by a native tool that answers with a
// canned result of the same size without reading its input, so every
// byte scanned or copied is the host's (codec, schema validation,
// envelope, output check, response). B/op over the size shows how many
// copies of the argument and the output are made.
//
//	go test -run '^$' -bench ToolCallBytes -benchtime 200x ./host/stdio
func BenchmarkToolCallBytes(b *testing.B) {
	for _, tc := range []struct {
		era string
		n   int
	}{{"2025-11-25", 16}, {"2025-11-25", 1 << 20}, {"2026-07-28", 16}, {"2026-07-28", 1 << 20}} {
		n := tc.n
		b.Run(tc.era+"/"+sizeName(n), func(b *testing.B) {
			text := strings.Repeat("x", n)
			out := []byte(`{"content":[{"type":"text","text":"` + text + `"}]}`)
			cfg := config.DefaultConfig()
			cfg.Plugins = []config.Spec{{Name: "big", Native: plugins.NativeModule(map[string]func(context.Context, []byte) ([]byte, error){
				abi.ExportListTools: func(context.Context, []byte) ([]byte, error) {
					return []byte(`{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}`), nil
				},
				abi.ExportCallTool: func(context.Context, []byte) ([]byte, error) { return out, nil },
			})}}
			g, err := plugins.NewLoader(plugins.LoaderOptions{Logger: quietLog}).Build(context.Background(), cfg, nil)
			if err != nil || len(g.Failures) > 0 {
				b.Fatalf("build: %v %v", err, g.Failures)
			}
			reg := plugins.NewRegistry()
			reg.Swap(context.Background(), g)
			defer reg.Close(context.Background())
			srv := host.New(reg, host.Options{Logger: quietLog})
			defer srv.Close()
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan error, 1)
			go func() {
				done <- Serve(context.Background(), srv, inR, outW)
				outW.Close()
			}()
			r := bufio.NewReaderSize(outR, 2*n+4096)
			roundTrip := func(line []byte) []byte {
				if _, err := inW.Write(line); err != nil {
					b.Fatal(err)
				}
				resp, err := r.ReadSlice('\n')
				if err != nil {
					b.Fatal(err)
				}
				return resp
			}
			meta := ""
			if tc.era == "2025-11-25" {
				roundTrip([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}` + "\n"))
				inW.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
			} else { // stateless: every request carries its _meta, after the arguments
				meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
			}
			line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big_echo","arguments":{"text":"` + text + `"}` + meta + `}}` + "\n")
			for range 3 { // warm the pools
				roundTrip(line)
			}
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				if resp := roundTrip(line); len(resp) < n || bytes.Contains(resp[:min(len(resp), 100)], []byte(`"isError"`)) {
					b.Fatalf("response %.200s", resp)
				}
			}
			inW.Close()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return strconv.Itoa(n>>20) + "MiB"
	}
	return strconv.Itoa(n) + "B"
}
