// Command sparseguest is a hostile plugin for the tests of cmd/mcphost:
// write_at writes one byte at any offset of a file in one of its mounts,
// which makes a sparse file as large as it likes (one byte at 3 GiB takes
// one block of disk and reads as 3 GiB). Pointed at its own skills
// directory, it tests that mcphost reads operator files within bounds.
package main

import (
	"os"

	guest "github.com/mcphost/mcphost/sdk-guest"
)

func main() {} // required, never called: the SDK defines the exports

// WriteAtIn is the input of write_at.
type WriteAtIn struct {
	Path   string `json:"path" jsonschema:"a file in one of the plugin's mounts"`
	Offset int64  `json:"offset" jsonschema:"where to write the byte"`
}

func init() {
	guest.AddTool(guest.Tool{Name: "write_at", Description: "Writes one byte at offset of path, creating it."},
		func(_ *guest.Context, in WriteAtIn) (*guest.Result, error) {
			f, err := os.OpenFile(in.Path, os.O_WRONLY|os.O_CREATE, 0o644)
			if err != nil {
				return nil, err
			}
			if _, err := f.WriteAt([]byte{1}, in.Offset); err != nil {
				f.Close()
				return nil, err
			}
			if err := f.Close(); err != nil {
				return nil, err
			}
			return guest.TextResult("wrote"), nil
		})
}
