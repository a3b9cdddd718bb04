package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
)

// none is the input of tools without arguments.
type none struct{}

// SamplingIn is the input of test_sampling.
type SamplingIn struct {
	Prompt string `json:"prompt" jsonschema:"The prompt to send to the LLM"`
}

// ElicitationIn is the input of test_elicitation.
type ElicitationIn struct {
	Message string `json:"message" jsonschema:"The message to show the user"`
}

// jsonSchema202012 is listed verbatim: the json-schema-2020-12 scenario
// checks that $schema, $defs and additionalProperties survive, and (SEP-2106)
// allOf/anyOf, if/then/else and $anchor.
const jsonSchema202012 = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}`

const elicitationSchema = `{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}`

const sep1034Schema = `{"type":"object","properties":{` +
	`"name":{"type":"string","description":"User name","default":"John Doe"},` +
	`"age":{"type":"integer","description":"User age","default":30},` +
	`"score":{"type":"number","description":"User score","default":95.5},` +
	`"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},` +
	`"verified":{"type":"boolean","description":"Verification status","default":true}` +
	`},"required":[]}`

const sep1330Schema = `{"type":"object","properties":{` +
	`"untitledSingle":{"type":"string","description":"Select one option","enum":["option1","option2","option3"]},` +
	`"titledSingle":{"type":"string","description":"Select one option with titles","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
	`"legacyEnum":{"type":"string","description":"Select one option (legacy)","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},` +
	`"untitledMulti":{"type":"array","description":"Select multiple options","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},` +
	`"titledMulti":{"type":"array","description":"Select multiple options with titles","minItems":1,"maxItems":3,"items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}` +
	`},"required":[]}`

func registerTools() {
	simple := func(name, desc string, r *guest.Result) {
		guest.AddTool(guest.Tool{Name: name, Description: desc}, func(*guest.Context, none) (*guest.Result, error) { return r, nil })
	}
	simple("test_simple_text", "Tests simple text content response",
		guest.TextResult("This is a simple text response for testing."))
	simple("test_image_content", "Tests image content response",
		guest.NewResult(guest.ImageBase64(pngBase64, "image/png")))
	simple("test_audio_content", "Tests audio content response",
		guest.NewResult(guest.AudioBase64(wavBase64, "audio/wav")))
	simple("test_embedded_resource", "Tests embedded resource content response",
		guest.NewResult(guest.EmbeddedText("test://embedded-resource", "text/plain", "This is an embedded resource content.")))
	simple("test_multiple_content_types", "Tests response with multiple content types (text, image, resource)",
		guest.NewResult(
			text("Multiple content types test:"),
			guest.ImageBase64(pngBase64, "image/png"),
			guest.EmbeddedText("test://mixed-content-resource", "application/json", `{"test":"data","value":123}`),
		))
	simple("test_error_handling", "Tests error response handling",
		guest.Error("This tool intentionally returns an error for testing"))

	guest.AddTool(guest.Tool{Name: "test_tool_with_logging", Description: "Tests tool that emits log messages during execution"}, withLogging)
	guest.AddTool(guest.Tool{Name: "test_tool_with_progress", Description: "Tests tool that reports progress notifications"}, withProgress)
	guest.AddTool(guest.Tool{Name: "test_sampling", Description: "Tests server-initiated sampling (LLM completion request)"}, sampling)
	guest.AddTool(guest.Tool{Name: "test_elicitation", Description: "Tests server-initiated elicitation (user input request)"},
		func(ctx *guest.Context, in ElicitationIn) (*guest.Result, error) {
			return elicit(ctx, in.Message, elicitationSchema, "User response")
		})
	guest.AddTool(guest.Tool{Name: "test_elicitation_sep1034_defaults", Description: "Tests elicitation with default values per SEP-1034"},
		func(ctx *guest.Context, _ none) (*guest.Result, error) {
			return elicit(ctx, "Please review and update the form fields with defaults", sep1034Schema, "Elicitation completed")
		})
	guest.AddTool(guest.Tool{Name: "test_elicitation_sep1330_enums", Description: "Tests elicitation with enum schema improvements per SEP-1330"},
		func(ctx *guest.Context, _ none) (*guest.Result, error) {
			return elicit(ctx, "Please select options from the enum fields", sep1330Schema, "Elicitation completed")
		})
	guest.AddToolRaw(abi.Tool{
		Name:        "json_schema_2020_12_tool",
		Description: "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)",
		InputSchema: json.RawMessage(jsonSchema202012),
	}, func(_ *guest.Context, args json.RawMessage) (*abi.CallToolResult, error) {
		return guest.TextResult("JSON Schema 2020-12 tool called with: " + compact(args)), nil
	})
	guest.AddTool(guest.Tool{Name: "test_reconnection", Description: "Tests SSE stream disconnection and client reconnection (SEP-1699). " +
		"Server will close the stream mid-call and send the result after client reconnects."},
		func(*guest.Context, none) (*guest.Result, error) {
			pause(100 * time.Millisecond) // the host closes the SSE stream meanwhile
			return guest.TextResult("Reconnection test completed successfully. If you received this, " +
				"the client properly reconnected after stream closure."), nil
		})
}

func withLogging(ctx *guest.Context, _ none) (*guest.Result, error) {
	for i, msg := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if i > 0 {
			pause(50 * time.Millisecond)
		}
		if err := ctx.Log(guest.LevelInfo, msg); err != nil {
			return nil, err
		}
	}
	return guest.TextResult("Tool with logging executed successfully"), nil
}

func withProgress(ctx *guest.Context, _ none) (*guest.Result, error) {
	for i, p := range []float64{0, 50, 100} {
		if i > 0 {
			pause(50 * time.Millisecond)
		}
		if err := ctx.Progress(p, 100, fmt.Sprintf("Completed step %v of 100", p)); err != nil {
			return nil, err
		}
	}
	// The TS SDK client drops a progress notification that arrives in the
	// same read as the response; a short gap avoids that.
	pause(20 * time.Millisecond)
	return guest.TextResult(tokenString(ctx.ProgressToken())), nil
}

// tokenString renders a progress token as JavaScript's String() would: a
// string token unquoted, a number as written, and "0" when there is none.
func tokenString(tok json.RawMessage) string {
	if tok == nil {
		return "0"
	}
	var s string
	if json.Unmarshal(tok, &s) == nil {
		return s
	}
	return string(tok)
}

func sampling(ctx *guest.Context, in SamplingIn) (*guest.Result, error) {
	r, err := ctx.Sample(abi.CreateMessageParams{
		Messages:  []abi.SamplingMessage{{Role: "user", Content: text(in.Prompt)}},
		MaxTokens: 100,
	})
	if err != nil {
		return guest.TextResult("Sampling not supported or error: " + err.Error()), nil
	}
	answer := r.Content.Text
	if answer == "" {
		answer = "No response"
	}
	return guest.TextResult("LLM response: " + answer), nil
}

func elicit(ctx *guest.Context, message, schema, prefix string) (*guest.Result, error) {
	r, err := ctx.Elicit(abi.ElicitParams{Message: message, RequestedSchema: json.RawMessage(schema)})
	if err != nil {
		return guest.TextResult("Elicitation not supported or error: " + err.Error()), nil
	}
	return guest.TextResult(fmt.Sprintf("%s: action=%s, content=%s", prefix, r.Action, compact(r.Content))), nil
}

// compact renders raw JSON as JSON.stringify would ("{}" when absent).
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if len(bytes.TrimSpace(raw)) == 0 || json.Compact(&b, raw) != nil || b.String() == "null" {
		return "{}"
	}
	return b.String()
}
