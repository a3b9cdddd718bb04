package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
)

// The fixtures of the 2026-07-28 scenarios. They use the same host
// functions as the 2025 ones (Elicit, Sample, Roots): mcphost turns them
// into input_required rounds for a stateless client. A request names its
// input key with abi.MetaInputKey where the suite expects a given key.

const nameSchema = `{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`

// key is the _meta naming an input request.
func key(k string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{abi.MetaInputKey: k})
	return b
}

func askName(ctx *guest.Context, k, message string) (string, error) {
	r, err := ctx.Elicit(abi.ElicitParams{Message: message, RequestedSchema: json.RawMessage(nameSchema), Meta: key(k)})
	if err != nil {
		return "", err
	}
	var c struct {
		Name string `json:"name"`
	}
	json.Unmarshal(r.Content, &c)
	return c.Name, nil
}

func askGreeting(ctx *guest.Context) (*abi.CreateMessageResult, error) {
	return ctx.Sample(abi.CreateMessageParams{
		Messages:  []abi.SamplingMessage{{Role: "user", Content: text("Generate a greeting")}},
		MaxTokens: 50, Meta: key("greeting"),
	})
}

// greet asks the user's name, then greets them.
func greet(ctx *guest.Context, _ none) (*guest.Result, error) {
	name, err := askName(ctx, "user_name", "What is your name?")
	if err != nil {
		return nil, err
	}
	return guest.TextResult("Hello, " + name + "!"), nil
}

func registerInputTools() {
	guest.AddTool(guest.Tool{Name: "test_input_required_result_elicitation", Description: "Asks the user's name by elicitation, then greets them"}, greet)
	guest.AddTool(guest.Tool{Name: "test_input_required_result_tampered_state", Description: "Asks the user's name by elicitation (its request state is integrity-protected)"}, greet)
	guest.AddTool(guest.Tool{Name: "test_input_required_result_sampling", Description: "Asks the client's model a question by sampling"},
		func(ctx *guest.Context, _ none) (*guest.Result, error) {
			r, err := ctx.Sample(abi.CreateMessageParams{
				Messages:  []abi.SamplingMessage{{Role: "user", Content: text("What is the capital of France?")}},
				MaxTokens: 100, Meta: key("capital_question"),
			})
			if err != nil {
				return nil, err
			}
			return guest.TextResult("LLM response: " + r.Content.Text), nil
		})
	guest.AddTool(guest.Tool{Name: "test_input_required_result_list_roots", Description: "Asks the client for its roots"},
		func(ctx *guest.Context, _ none) (*guest.Result, error) {
			roots, err := ctx.Roots()
			if err != nil {
				return nil, err
			}
			var uris []string
			for _, r := range roots {
				uris = append(uris, r.URI)
			}
			return guest.TextResult(fmt.Sprintf("Client roots: %v", uris)), nil
		})
	guest.AddTool(guest.Tool{Name: "test_input_required_result_request_state", Description: "Asks for a confirmation; the answer comes back with the request state"},
		func(ctx *guest.Context, _ none) (*guest.Result, error) {
			r, err := ctx.Elicit(abi.ElicitParams{Message: "Please confirm",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`),
				Meta:            key("confirm")})
			if err != nil {
				return nil, err
			}
			// The host verified the request state before this run.
			return guest.TextResult("Confirmed (state-ok): action=" + r.Action + ", content=" + compact(r.Content)), nil
		})
	guest.AddTool(guest.Tool{Name: "test_input_required_result_multiple_inputs", Description: "Asks for a name, a greeting and the roots at once"},
		func(ctx *guest.Context, _ none) (*guest.Result, error) {
			// Every request is made before giving up, so that the
			// client is asked for all of them in one round.
			name, err1 := askName(ctx, "user_name", "What is your name?")
			g, err2 := askGreeting(ctx)
			roots, err3 := ctx.Roots()
			if err := errors.Join(err1, err2, err3); err != nil {
				return nil, err
			}
			return guest.TextResult(fmt.Sprintf("%s, %s (%d roots)", g.Content.Text, name, len(roots))), nil
		})
	guest.AddTool(guest.Tool{Name: "test_input_required_result_multi_round", Description: "Asks two questions, one after the other"},
		func(ctx *guest.Context, _ none) (*guest.Result, error) {
			name, err := askName(ctx, "step1", "Step 1: What is your name?")
			if err != nil {
				return nil, err
			}
			r, err := ctx.Elicit(abi.ElicitParams{Message: "Step 2: What is your favorite color?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`),
				Meta:            key("step2")})
			if err != nil {
				return nil, err
			}
			return guest.TextResult(fmt.Sprintf("%s likes %s", name, compact(r.Content))), nil
		})
	guest.AddTool(guest.Tool{Name: "test_input_required_result_capabilities", Description: "Asks for whatever the client can answer: elicitation and sampling"},
		func(ctx *guest.Context, _ none) (*guest.Result, error) {
			_, err1 := askName(ctx, "user_name", "What is your name?")
			_, err2 := askGreeting(ctx)
			if err1 != nil && err2 != nil {
				return nil, errors.Join(err1, err2)
			}
			return guest.TextResult("Got what the client could give"), nil
		})
	guest.AddTool(guest.Tool{Name: "test_missing_capability", Description: "Needs sampling: fails without the client's sampling capability"},
		func(ctx *guest.Context, _ none) (*guest.Result, error) {
			r, err := ctx.Sample(abi.CreateMessageParams{
				Messages:  []abi.SamplingMessage{{Role: "user", Content: text("Say hello")}},
				MaxTokens: 20,
			})
			if err != nil {
				return nil, err
			}
			return guest.TextResult(r.Content.Text), nil
		})
	guest.AddTool(guest.Tool{Name: "test_streaming_elicitation", Description: "Asks for a name by elicitation while running"}, greet)
	guest.AddTool(guest.Tool{Name: "test_logging_tool", Description: "Logs while running (sent only when the request asks for a log level)"}, withLogging)
	// The suite calls each trigger several times and expects every call
	// to change the list ("Mutated the tool list but no
	// notifications/tools/list_changed arrived"); mcphost tells clients of
	// a list that changed, not of a notify alone. So each call toggles its
	// item: added by the first, removed by the second, and so on.
	guest.AddTool(guest.Tool{Name: "test_trigger_tool_change", Description: "Adds test_dynamic_tool, or removes it if present, and announces the tool list change"},
		func(*guest.Context, none) (*guest.Result, error) {
			if !guest.RemoveTool("test_dynamic_tool") {
				guest.AddTool(guest.Tool{Name: "test_dynamic_tool", Description: "Added by test_trigger_tool_change"},
					func(*guest.Context, none) (*guest.Result, error) { return guest.TextResult("dynamic"), nil })
			}
			if err := guest.NotifyToolListChanged(); err != nil {
				return nil, err
			}
			return guest.TextResult("tool list changed"), nil
		})
	guest.AddTool(guest.Tool{Name: "test_trigger_prompt_change", Description: "Adds test_dynamic_prompt, or removes it if present, and announces the prompt list change"},
		func(*guest.Context, none) (*guest.Result, error) {
			if !guest.RemovePrompt("test_dynamic_prompt") {
				guest.AddPrompt(abi.Prompt{Name: "test_dynamic_prompt", Description: "Added by test_trigger_prompt_change"},
					func(*guest.Context, map[string]string) (*abi.GetPromptResult, error) {
						return &abi.GetPromptResult{Messages: []abi.PromptMessage{guest.UserMessage(text("dynamic"))}}, nil
					})
			}
			if err := guest.NotifyPromptListChanged(); err != nil {
				return nil, err
			}
			return guest.TextResult("prompt list changed"), nil
		})
	guest.AddToolRaw(abi.Tool{
		Name:        "test_header_param",
		Description: "Echoes a region that Streamable HTTP clients also send as the Mcp-Param-Region header",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","description":"A region name","x-mcp-header":"Region"}},"required":["region"]}`),
	}, func(_ *guest.Context, args json.RawMessage) (*abi.CallToolResult, error) {
		return guest.TextResult("region: " + compact(args)), nil
	})
	guest.AddPrompt(abi.Prompt{Name: "test_input_required_result_prompt", Description: "A prompt that asks the user for context first"},
		func(ctx *guest.Context, _ map[string]string) (*abi.GetPromptResult, error) {
			r, err := ctx.Elicit(abi.ElicitParams{Message: "What context should the prompt use?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`),
				Meta:            key("prompt_context")})
			if err != nil {
				return nil, err
			}
			return &abi.GetPromptResult{Messages: []abi.PromptMessage{
				guest.UserMessage(text("Use this context: " + compact(r.Content))),
			}}, nil
		})
}
