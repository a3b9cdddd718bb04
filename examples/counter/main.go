package main

import (
	"strconv"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
)

// CountIn is the count tool's input.
type CountIn struct {
	Name string `json:"name,omitempty" jsonschema:"which counter (default \"default\")"`
}

func main() {}

func init() {
	guest.AddTool(guest.Tool{
		Name:        "count",
		Title:       "Count",
		Description: "Adds one to a named counter and returns its new value. Counters are shared by every replica of the server and outlive restarts.",
		Annotations: &abi.ToolAnnotations{OpenWorldHint: new(false)},
	}, count)
	guest.AddTool(guest.Tool{
		Name:        "peek",
		Title:       "Peek",
		Description: "Returns a named counter's value without changing it (0 when it was never counted).",
		Annotations: &abi.ToolAnnotations{ReadOnlyHint: new(true), OpenWorldHint: new(false)},
	}, peek)
}

func key(name string) string {
	if name == "" {
		name = "default"
	}
	return "count:" + name
}

func count(_ *guest.Context, in CountIn) (*guest.Result, error) {
	n, err := guest.KV.Increment(key(in.Name), 1)
	if err != nil {
		// The store is down or the quota is reached: say so, never
		// count from a guess.
		return guest.Errorf("counter not counted: %v", err), nil
	}
	return guest.TextResult(strconv.FormatInt(n, 10)), nil
}

func peek(_ *guest.Context, in CountIn) (*guest.Result, error) {
	v, ok, err := guest.KV.Get(key(in.Name))
	if err != nil {
		return guest.Errorf("counter not read: %v", err), nil
	}
	if !ok {
		return guest.TextResult("0"), nil
	}
	return guest.TextResult(string(v)), nil
}
