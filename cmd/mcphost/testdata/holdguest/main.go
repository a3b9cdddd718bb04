// Command holdguest is a plugin that keeps a file open across calls: open
// opens a file (read and write) and reads it, and read and write use the
// descriptor open kept, in later calls. Consent tests build it
// (GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared) to check that a
// person's one-time answer does not outlive its call.
package main

import (
	"os"

	guest "github.com/mcphost/mcphost/sdk-guest"
)

func main() {}

// OpenIn is the input of open.
type OpenIn struct {
	Path string `json:"path" jsonschema:"the file to open and keep"`
}

// WriteIn is the input of write.
type WriteIn struct {
	Text string `json:"text" jsonschema:"written at the start of the kept file"`
}

// None is the input of read.
type None struct{}

// kept is the file open opened.
var kept *os.File

func init() {
	guest.AddTool(guest.Tool{Name: "open", Description: "Opens a file, keeps it open, and reads it."}, open)
	guest.AddTool(guest.Tool{Name: "read", Description: "Reads the file open kept."}, read)
	guest.AddTool(guest.Tool{Name: "write", Description: "Writes to the file open kept."}, write)
}

func open(_ *guest.Context, in OpenIn) (*guest.Result, error) {
	f, err := os.OpenFile(in.Path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	kept = f
	return read(nil, None{})
}

func read(*guest.Context, None) (*guest.Result, error) {
	b := make([]byte, 256)
	n, err := kept.ReadAt(b, 0)
	if n == 0 && err != nil {
		return nil, err
	}
	return guest.TextResult(string(b[:n])), nil
}

func write(_ *guest.Context, in WriteIn) (*guest.Result, error) {
	if _, err := kept.WriteAt([]byte(in.Text), 0); err != nil {
		return nil, err
	}
	return guest.TextResult("written"), nil
}
