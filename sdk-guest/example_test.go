package guest_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
)

// A plugin registers a typed tool in an init function. Off Wasm the same
// code runs natively: guest.Dispatch is what the call_tool export runs, so
// this example calls the tool exactly as mcphost would (in a plugin's own
// tests, sdk-guest/guesttest's CallTool builds the input and decodes the
// result).
func ExampleAddTool() {
	type In struct {
		Text string `json:"text" jsonschema:"the text to hash"`
	}
	guest.AddTool(guest.Tool{Name: "sha256", Description: "SHA-256 of a text"},
		func(_ *guest.Context, in In) (*guest.Result, error) {
			sum := sha256.Sum256([]byte(in.Text))
			return guest.TextResult(hex.EncodeToString(sum[:])), nil
		})

	out, err := guest.Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"sha256","arguments":{"text":"hello"}},"context":{}}`))
	fmt.Println(string(out), err)

	// Arguments that do not fit In are the model's mistake: a result with
	// isError set, so it can correct itself, not a failed export.
	out, err = guest.Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"sha256","arguments":{"text":42}},"context":{}}`))
	fmt.Println(strings.Contains(string(out), `"isError":true`), err)
	// Output:
	// {"content":[{"type":"text","text":"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"}]} <nil>
	// true <nil>
}

// A tool with typed output: the result carries Out as structuredContent,
// and the listing carries the output schema derived from Out.
func ExampleAddToolOut() {
	type In struct {
		Words string `json:"words"`
	}
	type Out struct {
		Count int `json:"count"`
	}
	guest.AddToolOut(guest.Tool{Name: "count_words"},
		func(_ *guest.Context, in In) (Out, error) {
			return Out{Count: len(strings.Fields(in.Words))}, nil
		})

	out, err := guest.Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"count_words","arguments":{"words":"one two three"}},"context":{}}`))
	fmt.Println(string(out), err)
	// Output:
	// {"content":[{"type":"text","text":"{\"count\":3}"}],"structuredContent":{"count":3}} <nil>
}
