package guest_test

import (
	"encoding/json"
	"fmt"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
	"github.com/mcphost/mcphost/sdk-guest/guesttest"
)

// guest.Config reads the plugin's config table from its plugins.toml
// entry; a key the operator did not set is reported, not defaulted
// silently. guesttest's Host holds the values natively.
func ExampleConfig() {
	defer guesttest.Use(&guesttest.Host{ConfigValues: map[string]string{"units": "metric"}})()

	units, ok := guest.Config("units")
	fmt.Println(units, ok)
	_, ok = guest.Config("api_base")
	fmt.Println(ok)
	// Output:
	// metric true
	// false
}

// A handler asks the person behind the client for input (elicitation)
// and acts on their answer: accept with content, decline or cancel.
func ExampleContext_Elicit() {
	defer guesttest.Use(&guesttest.Host{Elicit: func(p abi.ElicitParams) (*abi.ElicitResult, error) {
		// Stands in for a client whose user types "Ada".
		return &abi.ElicitResult{Action: "accept", Content: json.RawMessage(`{"name":"Ada"}`)}, nil
	}})()
	guest.AddTool(guest.Tool{Name: "greet_someone"},
		func(ctx *guest.Context, _ struct{}) (*guest.Result, error) {
			r, err := ctx.Elicit(abi.ElicitParams{
				Message:         "Whom shall I greet?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
			})
			if err != nil {
				return nil, err // a client without elicitation: the host says so
			}
			if r.Action != "accept" {
				return guest.TextResult("nobody to greet (" + r.Action + ")"), nil
			}
			var in struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(r.Content, &in); err != nil {
				return nil, err
			}
			return guest.TextResult("hello, " + in.Name), nil
		})

	out, err := guest.Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"greet_someone"},"context":{}}`))
	fmt.Println(string(out), err)
	// Output:
	// {"content":[{"type":"text","text":"hello, Ada"}]} <nil>
}

// A handler asks the client's model for a completion (sampling). Without
// a client that samples, Sample fails with the host's error, which the
// handler can pass on.
func ExampleContext_Sample() {
	defer guesttest.Use(&guesttest.Host{Sample: func(p abi.CreateMessageParams) (*abi.CreateMessageResult, error) {
		// Stands in for a client's model that answers in capitals.
		return &abi.CreateMessageResult{Role: "assistant", Model: "test-model", Content: guest.Text("HAIKU ABOUT " + p.Messages[0].Content.Text)}, nil
	}})()
	guest.AddTool(guest.Tool{Name: "haiku"},
		func(ctx *guest.Context, in struct {
			Topic string `json:"topic"`
		}) (*guest.Result, error) {
			r, err := ctx.Sample(abi.CreateMessageParams{
				Messages:  []abi.SamplingMessage{{Role: "user", Content: guest.Text(in.Topic)}},
				MaxTokens: 100,
			})
			if err != nil {
				return nil, err
			}
			return guest.TextResult(r.Content.Text + " (by " + r.Model + ")"), nil
		})

	out, err := guest.Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"haiku","arguments":{"topic":"rain"}},"context":{}}`))
	fmt.Println(string(out), err)
	// Output:
	// {"content":[{"type":"text","text":"HAIKU ABOUT rain (by test-model)"}]} <nil>
}
