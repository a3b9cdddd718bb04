// Command limit is the benchmarks' idea of a perfect MCP server: a
// hand-written stdio JSON-RPC loop answering tools/call with a constant
// result. No real server can be faster over the same pipes.
package main

import (
	"bufio"
	"encoding/json"
	"os"
)

func main() {
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
