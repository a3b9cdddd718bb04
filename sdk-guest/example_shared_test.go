package guest_test

import (
	"fmt"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
	"github.com/mcphost/mcphost/sdk-guest/guesttest"
)

// Alias describes a tool a person adds at run time: one that says Text.
type Alias struct {
	Name string `json:"name"`
	Text string `json:"text"`
}

// aliases is a kind of shared tool, registered at init like any tool:
// every instance of the plugin, on every replica, builds an Alias's tool
// from the value kept in the plugin's KV.
var aliases = guest.NewSharedTools("alias", func(a Alias) {
	guest.AddTool(guest.Tool{Name: a.Name, Description: "Says " + a.Text},
		func(*guest.Context, struct{}) (*guest.Result, error) { return guest.TextResult(a.Text), nil })
})

// A tool that adds tools: aliases.Add keeps the Alias in the KV, serves its
// tool here, and tells the host the tool list changed, so that every
// replica re-reads it and its instances build the tool too.
func ExampleNewSharedTools() {
	h := &guesttest.Host{}
	defer guesttest.Use(h)()
	guest.AddTool(guest.Tool{Name: "add_alias"},
		func(_ *guest.Context, a Alias) (*guest.Result, error) {
			name, err := aliases.Add(a)
			if err != nil {
				return nil, err // the KV is down or full: the error says which
			}
			return guest.TextResult("added " + name), nil
		})

	out, err := guest.Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"add_alias","arguments":{"name":"greet","text":"hello"}},"context":{}}`))
	fmt.Println(string(out), err, len(h.Calls(abi.HostToolListChanged)))
	out, err = guest.Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"greet"},"context":{}}`))
	fmt.Println(string(out), err)

	// The values live in the plugin's KV, under keys starting "guest.tool".
	keys, _, err := guest.KV.Keys("")
	fmt.Println(keys, err)

	// Remove takes the tool away here and, as they catch up, everywhere.
	err = aliases.Remove("greet")
	_, callErr := guest.Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"greet"},"context":{}}`))
	fmt.Println(err, callErr)
	// Output:
	// {"content":[{"type":"text","text":"added greet"}]} <nil> 1
	// {"content":[{"type":"text","text":"hello"}]} <nil>
	// [guest.tool:greet guest.tools] <nil>
	// <nil> call_tool: unknown tool "greet"
}
