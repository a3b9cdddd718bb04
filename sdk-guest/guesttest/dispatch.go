package guesttest

import (
	"encoding/json"
	"testing"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
)

// Input builds the JSON input of a v2 export: request (nil for none) and
// the call context.
func Input(t testing.TB, request any, ctx abi.Context) []byte {
	t.Helper()
	in := struct {
		Request any         `json:"request,omitempty"`
		Context abi.Context `json:"context"`
	}{request, ctx}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatalf("encode input: %v", err)
	}
	return b
}

// Dispatch runs export and decodes its output into out (when err is nil).
func Dispatch(t testing.TB, export string, request any, ctx abi.Context, out any) error {
	t.Helper()
	b, err := guest.Dispatch(export, Input(t, request, ctx))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: output is not valid JSON (%v): %s", export, err, b)
	}
	return nil
}

// CallTool calls tool name with args (anything that encodes to a JSON
// object, or nil) and fails the test if the export itself fails.
func CallTool(t testing.TB, name string, args any) *abi.CallToolResult {
	t.Helper()
	return CallToolContext(t, name, args, abi.Context{})
}

// CallToolContext is CallTool with a call context (for _meta such as a
// progress token).
func CallToolContext(t testing.TB, name string, args any, ctx abi.Context) *abi.CallToolResult {
	t.Helper()
	req := map[string]any{"name": name}
	if args != nil {
		req["arguments"] = args
	}
	var res abi.CallToolResult
	if err := Dispatch(t, abi.ExportCallTool, req, ctx, &res); err != nil {
		t.Fatalf("call_tool %s: %v", name, err)
	}
	return &res
}

// ListTools returns the plugin's tools.
func ListTools(t testing.TB) []abi.Tool {
	t.Helper()
	var res abi.ListToolsResult
	if err := Dispatch(t, abi.ExportListTools, nil, abi.Context{}, &res); err != nil {
		t.Fatalf("list_tools: %v", err)
	}
	return res.Tools
}

// ListResources returns the plugin's resources.
func ListResources(t testing.TB) []abi.Resource {
	t.Helper()
	var res abi.ListResourcesResult
	if err := Dispatch(t, abi.ExportListResources, nil, abi.Context{}, &res); err != nil {
		t.Fatalf("list_resources: %v", err)
	}
	return res.Resources
}

// ListResourceTemplates returns the plugin's resource templates.
func ListResourceTemplates(t testing.TB) []abi.ResourceTemplate {
	t.Helper()
	var res abi.ListResourceTemplatesResult
	if err := Dispatch(t, abi.ExportListResourceTemplates, nil, abi.Context{}, &res); err != nil {
		t.Fatalf("list_resource_templates: %v", err)
	}
	return res.ResourceTemplates
}

// ReadResource reads uri.
func ReadResource(t testing.TB, uri string) (*abi.ReadResourceResult, error) {
	t.Helper()
	var res abi.ReadResourceResult
	if err := Dispatch(t, abi.ExportReadResource, abi.ReadResourceParams{URI: uri}, abi.Context{}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// ListPrompts returns the plugin's prompts.
func ListPrompts(t testing.TB) []abi.Prompt {
	t.Helper()
	var res abi.ListPromptsResult
	if err := Dispatch(t, abi.ExportListPrompts, nil, abi.Context{}, &res); err != nil {
		t.Fatalf("list_prompts: %v", err)
	}
	return res.Prompts
}

// GetPrompt renders prompt name with args.
func GetPrompt(t testing.TB, name string, args map[string]string) (*abi.GetPromptResult, error) {
	t.Helper()
	var res abi.GetPromptResult
	if err := Dispatch(t, abi.ExportGetPrompt, abi.GetPromptParams{Name: name, Arguments: args}, abi.Context{}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Complete asks for completions.
func Complete(t testing.TB, p abi.CompleteParams) (*abi.CompleteResult, error) {
	t.Helper()
	var res abi.CompleteResult
	if err := Dispatch(t, abi.ExportComplete, p, abi.Context{}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
