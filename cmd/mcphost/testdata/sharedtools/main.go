// Command sharedtools is a stateful plugin that adds tools at run time,
// for the replica tests of cmd/mcphost: add_tool adds a shared tool (the
// SDK keeps it in the plugin's KV, so every instance on every replica
// serves it) that says a text; add_local_tool adds one with plain
// AddTool, which only the instance that ran it has.
package main

import (
	guest "github.com/mcphost/mcphost/sdk-guest"
)

func main() {} // required, never called: the SDK defines the exports

// Alias is a tool that says Text.
type Alias struct {
	Name string `json:"name" jsonschema:"the new tool's name"`
	Text string `json:"text" jsonschema:"what it says"`
}

type none struct{}

func say(a Alias) {
	guest.AddTool(guest.Tool{Name: a.Name, Description: "Says " + a.Text},
		func(*guest.Context, none) (*guest.Result, error) { return guest.TextResult(a.Text), nil })
}

var aliases = guest.NewSharedTools("alias", say)

func init() {
	guest.AddTool(guest.Tool{Name: "add_tool", Description: "Adds a tool, served by every replica, that says a text."},
		func(_ *guest.Context, a Alias) (*guest.Result, error) {
			name, err := aliases.Add(a)
			if err != nil {
				return nil, err
			}
			return guest.TextResult("added " + name), nil
		})
	guest.AddTool(guest.Tool{Name: "add_local_tool", Description: "Adds a tool that says a text, in this instance only."},
		func(_ *guest.Context, a Alias) (*guest.Result, error) {
			say(a)
			if err := guest.NotifyToolListChanged(); err != nil {
				return nil, err
			}
			return guest.TextResult("added " + a.Name), nil
		})
}
