package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
	"github.com/mcphost/mcphost/sdk-guest/guesttest"
)

const (
	png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	wav = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

// recordPauses replaces pause for the test and returns the requested
// durations.
func recordPauses(t *testing.T) *[]time.Duration {
	var got []time.Duration
	old := pause
	pause = func(d time.Duration) { got = append(got, d) }
	t.Cleanup(func() { pause = old })
	return &got
}

// judge answers sampling and elicitation as the conformance suite does.
func judge() *guesttest.Host {
	return &guesttest.Host{
		Sample: func(abi.CreateMessageParams) (*abi.CreateMessageResult, error) {
			return &abi.CreateMessageResult{Role: "assistant", Content: guest.Text("This is a test response from the client"),
				Model: "test-model", StopReason: "endTurn"}, nil
		},
		Elicit: func(p abi.ElicitParams) (*abi.ElicitResult, error) {
			return &abi.ElicitResult{Action: "accept", Content: json.RawMessage(`{"username":"testuser","email":"test@example.com"}`)}, nil
		},
	}
}

func dispatch(t *testing.T, export, input string) string {
	t.Helper()
	out, err := guest.Dispatch(export, []byte(input))
	if err != nil {
		t.Fatalf("%s %s: %v", export, input, err)
	}
	return string(out)
}

func TestToolPayloads(t *testing.T) {
	guesttest.Install(t, judge())
	recordPauses(t)
	tests := []struct {
		name, args, want string
	}{
		{"test_simple_text", ``, `{"content":[{"type":"text","text":"This is a simple text response for testing."}]}`},
		{"test_image_content", `{}`, `{"content":[{"type":"image","data":"` + png + `","mimeType":"image/png"}]}`},
		{"test_audio_content", `{}`, `{"content":[{"type":"audio","data":"` + wav + `","mimeType":"audio/wav"}]}`},
		{"test_embedded_resource", `{}`, `{"content":[{"type":"resource","resource":{"uri":"test://embedded-resource","mimeType":"text/plain","text":"This is an embedded resource content."}}]}`},
		{"test_multiple_content_types", `{}`, `{"content":[{"type":"text","text":"Multiple content types test:"},{"type":"image","data":"` + png + `","mimeType":"image/png"},{"type":"resource","resource":{"uri":"test://mixed-content-resource","mimeType":"application/json","text":"{\"test\":\"data\",\"value\":123}"}}]}`},
		{"test_error_handling", `{}`, `{"content":[{"type":"text","text":"This tool intentionally returns an error for testing"}],"isError":true}`},
		{"test_tool_with_logging", `{}`, `{"content":[{"type":"text","text":"Tool with logging executed successfully"}]}`},
		{"test_sampling", `{"prompt":"Test prompt for sampling"}`, `{"content":[{"type":"text","text":"LLM response: This is a test response from the client"}]}`},
		{"test_elicitation", `{"message":"Please provide your information"}`, `{"content":[{"type":"text","text":"User response: action=accept, content={\"username\":\"testuser\",\"email\":\"test@example.com\"}"}]}`},
		{"test_elicitation_sep1034_defaults", `{}`, `{"content":[{"type":"text","text":"Elicitation completed: action=accept, content={\"username\":\"testuser\",\"email\":\"test@example.com\"}"}]}`},
		{"test_elicitation_sep1330_enums", `{}`, `{"content":[{"type":"text","text":"Elicitation completed: action=accept, content={\"username\":\"testuser\",\"email\":\"test@example.com\"}"}]}`},
		{"json_schema_2020_12_tool", `{"name":"n","address":{"city":"c"}}`, `{"content":[{"type":"text","text":"JSON Schema 2020-12 tool called with: {\"name\":\"n\",\"address\":{\"city\":\"c\"}}"}]}`},
		{"json_schema_2020_12_tool", ``, `{"content":[{"type":"text","text":"JSON Schema 2020-12 tool called with: {}"}]}`},
		{"test_reconnection", `{}`, `{"content":[{"type":"text","text":"Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure."}]}`},
	}
	for _, tt := range tests {
		req := `{"name":"` + tt.name + `"`
		if tt.args != "" {
			req += `,"arguments":` + tt.args
		}
		got := dispatch(t, abi.ExportCallTool, `{"request":`+req+`},"context":{"id":1}}`)
		if got != tt.want {
			t.Errorf("%s:\ngot  %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

func TestToolList(t *testing.T) {
	tools := guesttest.ListTools(t)
	want := []string{"test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
		"test_multiple_content_types", "test_error_handling", "test_tool_with_logging", "test_tool_with_progress",
		"test_sampling", "test_elicitation", "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums",
		"json_schema_2020_12_tool", "test_reconnection",
		// 2026-07-28 (input.go)
		"test_input_required_result_elicitation", "test_input_required_result_tampered_state",
		"test_input_required_result_sampling", "test_input_required_result_list_roots",
		"test_input_required_result_request_state", "test_input_required_result_multiple_inputs",
		"test_input_required_result_multi_round", "test_input_required_result_capabilities",
		"test_missing_capability", "test_streaming_elicitation", "test_logging_tool",
		"test_trigger_tool_change", "test_trigger_prompt_change", "test_header_param",
		"greet", "slow_compute", "failing_job", "protocol_error_job", "confirm_delete", "multi_input", "test_tool_with_task"}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
		var s struct {
			Type string `json:"type"`
		}
		if tl.Description == "" || json.Unmarshal(tl.InputSchema, &s) != nil || s.Type != "object" {
			t.Errorf("%s: description %q, inputSchema %s; want a description and type object", tl.Name, tl.Description, tl.InputSchema)
		}
		switch tl.Name {
		case "json_schema_2020_12_tool":
			if string(tl.InputSchema) != jsonSchema202012 {
				t.Errorf("json_schema_2020_12_tool inputSchema = %s; want it verbatim", tl.InputSchema)
			}
		case "slow_compute", "confirm_delete", "multi_input", "protocol_error_job":
			if tl.Execution == nil || tl.Execution.TaskSupport != abi.TaskOptional {
				t.Errorf("%s execution = %+v; want taskSupport optional", tl.Name, tl.Execution)
			}
		case "failing_job", "test_tool_with_task":
			if tl.Execution == nil || tl.Execution.TaskSupport != abi.TaskRequired {
				t.Errorf("%s execution = %+v; want taskSupport required", tl.Name, tl.Execution)
			}
		case "test_sampling":
			if w := `{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"],"additionalProperties":false}`; string(tl.InputSchema) != w {
				t.Errorf("test_sampling inputSchema = %s; want %s", tl.InputSchema, w)
			}
		}
	}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Errorf("tools = %v; want %v", names, want)
	}
}

func TestLogging(t *testing.T) {
	h := guesttest.Install(t, nil)
	pauses := recordPauses(t)
	guesttest.CallTool(t, "test_tool_with_logging", map[string]any{})
	var got []string
	for _, c := range h.Calls(abi.HostLog) {
		got = append(got, string(c.Payload))
	}
	want := []string{`{"level":"info","data":"Tool execution started"}`, `{"level":"info","data":"Tool processing data"}`,
		`{"level":"info","data":"Tool execution completed"}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("log notifications:\ngot  %v\nwant %v", got, want)
	}
	if w := []time.Duration{50 * time.Millisecond, 50 * time.Millisecond}; !slices.Equal(*pauses, w) {
		t.Errorf("pauses = %v; want %v", *pauses, w)
	}
}

func TestProgress(t *testing.T) {
	tests := []struct {
		meta, token, text string
	}{
		{`{"progressToken":"progress-test-1"}`, `"progress-test-1"`, "progress-test-1"},
		{`{"progressToken":42}`, `42`, "42"},
	}
	for _, tt := range tests {
		h := guesttest.Install(t, nil)
		pauses := recordPauses(t)
		res := guesttest.CallToolContext(t, "test_tool_with_progress", nil, abi.Context{ID: json.RawMessage("3"), Meta: json.RawMessage(tt.meta)})
		if len(res.Content) != 1 || res.Content[0].Text != tt.text {
			t.Errorf("token %s: result %+v; want text %q", tt.token, res.Content, tt.text)
		}
		var got []string
		for _, c := range h.Calls(abi.HostProgress) {
			got = append(got, string(c.Payload))
		}
		want := []string{
			`{"progressToken":` + tt.token + `,"progress":0,"total":100,"message":"Completed step 0 of 100"}`,
			`{"progressToken":` + tt.token + `,"progress":50,"total":100,"message":"Completed step 50 of 100"}`,
			`{"progressToken":` + tt.token + `,"progress":100,"total":100,"message":"Completed step 100 of 100"}`,
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("progress notifications:\ngot  %v\nwant %v", got, want)
		}
		if w := []time.Duration{50 * time.Millisecond, 50 * time.Millisecond, 20 * time.Millisecond}; !slices.Equal(*pauses, w) {
			t.Errorf("pauses = %v; want %v", *pauses, w)
		}
	}
	// Without a token the tool still answers, and sends nothing.
	h := guesttest.Install(t, nil)
	recordPauses(t)
	if res := guesttest.CallTool(t, "test_tool_with_progress", nil); res.Content[0].Text != "0" || len(h.Calls(abi.HostProgress)) != 0 {
		t.Errorf("no token: result %q, %d notifications; want \"0\" and none", res.Content[0].Text, len(h.Calls(abi.HostProgress)))
	}
}

func TestSamplingAndElicitationRequests(t *testing.T) {
	h := guesttest.Install(t, judge())
	guesttest.CallTool(t, "test_sampling", map[string]string{"prompt": "Test prompt for sampling"})
	guesttest.CallTool(t, "test_elicitation", map[string]string{"message": "Please provide your information"})
	guesttest.CallTool(t, "test_elicitation_sep1034_defaults", nil)
	guesttest.CallTool(t, "test_elicitation_sep1330_enums", nil)

	s := h.Calls(abi.HostSample)
	if len(s) != 1 || string(s[0].Payload) != `{"messages":[{"role":"user","content":{"type":"text","text":"Test prompt for sampling"}}],"maxTokens":100}` {
		t.Errorf("sampling request = %v", s)
	}
	e := h.Calls(abi.HostElicit)
	want := []string{
		`{"message":"Please provide your information","requestedSchema":` + elicitationSchema + `}`,
		`{"message":"Please review and update the form fields with defaults","requestedSchema":` + sep1034Schema + `}`,
		`{"message":"Please select options from the enum fields","requestedSchema":` + sep1330Schema + `}`,
	}
	if len(e) != len(want) {
		t.Fatalf("got %d elicitation requests; want %d", len(e), len(want))
	}
	for i := range want {
		if string(e[i].Payload) != want[i] {
			t.Errorf("elicitation %d:\ngot  %s\nwant %s", i, e[i].Payload, want[i])
		}
	}
	// The SEP-1034 checks: exact types and defaults.
	var s1034 struct {
		Properties map[string]struct {
			Type    string          `json:"type"`
			Default json.RawMessage `json:"default"`
			Enum    []string        `json:"enum"`
		} `json:"properties"`
	}
	if err := json.Unmarshal([]byte(sep1034Schema), &s1034); err != nil {
		t.Fatal(err)
	}
	for name, w := range map[string][2]string{"name": {"string", `"John Doe"`}, "age": {"integer", "30"}, "score": {"number", "95.5"},
		"status": {"string", `"active"`}, "verified": {"boolean", "true"}} {
		p := s1034.Properties[name]
		if p.Type != w[0] || string(p.Default) != w[1] {
			t.Errorf("sep1034 %s = %s default %s; want %s default %s", name, p.Type, p.Default, w[0], w[1])
		}
	}
}

func TestSamplingUnsupported(t *testing.T) {
	guesttest.Install(t, nil) // a client without sampling or elicitation
	res := guesttest.CallTool(t, "test_sampling", map[string]string{"prompt": "p"})
	if res.IsError || !strings.HasPrefix(res.Content[0].Text, "Sampling not supported or error: host create_message: ") {
		t.Errorf("sampling unsupported: %+v; want a non-error explanation", res)
	}
	res = guesttest.CallTool(t, "test_elicitation", map[string]string{"message": "m"})
	if res.IsError || !strings.HasPrefix(res.Content[0].Text, "Elicitation not supported or error: ") {
		t.Errorf("elicitation unsupported: %+v; want a non-error explanation", res)
	}
}

func TestResources(t *testing.T) {
	got := dispatch(t, abi.ExportListResources, `{"context":{}}`)
	want := `{"resources":[` +
		`{"uri":"test://static-text","name":"static-text","title":"Static Text Resource","description":"A static text resource for testing","mimeType":"text/plain"},` +
		`{"uri":"test://static-binary","name":"static-binary","title":"Static Binary Resource","description":"A static binary resource (image) for testing","mimeType":"image/png"},` +
		`{"uri":"test://watched-resource","name":"watched-resource","title":"Watched Resource","description":"A resource that auto-updates every 3 seconds","mimeType":"text/plain"}]}`
	if got != want {
		t.Errorf("list_resources:\ngot  %s\nwant %s", got, want)
	}
	got = dispatch(t, abi.ExportListResourceTemplates, `{"context":{}}`)
	want = `{"resourceTemplates":[{"uriTemplate":"test://template/{id}/data","name":"template","title":"Resource Template","description":"A resource template with parameter substitution","mimeType":"application/json"}]}`
	if got != want {
		t.Errorf("list_resource_templates:\ngot  %s\nwant %s", got, want)
	}
	reads := []struct{ uri, want string }{
		{"test://static-text", `{"contents":[{"uri":"test://static-text","mimeType":"text/plain","text":"This is the content of the static text resource."}]}`},
		{"test://static-binary", `{"contents":[{"uri":"test://static-binary","mimeType":"image/png","blob":"` + png + `"}]}`},
		{"test://watched-resource", `{"contents":[{"uri":"test://watched-resource","mimeType":"text/plain","text":"Watched resource content"}]}`},
		{"test://template/123/data", `{"contents":[{"uri":"test://template/123/data","mimeType":"application/json","text":"{\"id\":\"123\",\"templateTest\":true,\"data\":\"Data for ID: 123\"}"}]}`},
	}
	for _, tt := range reads {
		if got := dispatch(t, abi.ExportReadResource, `{"request":{"uri":"`+tt.uri+`"},"context":{}}`); got != tt.want {
			t.Errorf("read %s:\ngot  %s\nwant %s", tt.uri, got, tt.want)
		}
	}
	if _, err := guesttest.ReadResource(t, "test://nope"); err == nil {
		t.Errorf("read test://nope: nil error; want not found")
	}
}

func TestPrompts(t *testing.T) {
	got := dispatch(t, abi.ExportListPrompts, `{"context":{}}`)
	want := `{"prompts":[` +
		`{"name":"test_simple_prompt","title":"Simple Test Prompt","description":"A simple prompt without arguments"},` +
		`{"name":"test_prompt_with_arguments","title":"Prompt With Arguments","description":"A prompt with required arguments","arguments":[{"name":"arg1","description":"First test argument","required":true},{"name":"arg2","description":"Second test argument","required":true}]},` +
		`{"name":"test_prompt_with_embedded_resource","title":"Prompt With Embedded Resource","description":"A prompt that includes an embedded resource","arguments":[{"name":"resourceUri","description":"URI of the resource to embed","required":true}]},` +
		`{"name":"test_prompt_with_image","title":"Prompt With Image","description":"A prompt that includes image content"},` +
		`{"name":"test_input_required_result_prompt","description":"A prompt that asks the user for context first"}]}`
	if got != want {
		t.Errorf("list_prompts:\ngot  %s\nwant %s", got, want)
	}
	tests := []struct{ req, want string }{
		{`{"name":"test_simple_prompt"}`, `{"messages":[{"role":"user","content":{"type":"text","text":"This is a simple prompt for testing."}}]}`},
		{`{"name":"test_prompt_with_arguments","arguments":{"arg1":"testValue1","arg2":"testValue2"}}`,
			`{"messages":[{"role":"user","content":{"type":"text","text":"Prompt with arguments: arg1='testValue1', arg2='testValue2'"}}]}`},
		{`{"name":"test_prompt_with_embedded_resource","arguments":{"resourceUri":"test://example-resource"}}`,
			`{"messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"test://example-resource","mimeType":"text/plain","text":"Embedded resource content for testing."}}},{"role":"user","content":{"type":"text","text":"Please process the embedded resource above."}}]}`},
		{`{"name":"test_prompt_with_image"}`,
			`{"messages":[{"role":"user","content":{"type":"image","data":"` + png + `","mimeType":"image/png"}},{"role":"user","content":{"type":"text","text":"Please analyze the image above."}}]}`},
	}
	for _, tt := range tests {
		if got := dispatch(t, abi.ExportGetPrompt, `{"request":`+tt.req+`,"context":{}}`); got != tt.want {
			t.Errorf("get_prompt %s:\ngot  %s\nwant %s", tt.req, got, tt.want)
		}
	}
}

func TestCompletion(t *testing.T) {
	tests := []struct{ req, want string }{
		{`{"ref":{"type":"prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg1","value":"test"}}`, `{"completion":{"values":["testValue1","test"],"total":2}}`},
		{`{"ref":{"type":"prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg2","value":"ex"}}`, `{"completion":{"values":["example"],"total":1}}`},
		{`{"ref":{"type":"prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg1","value":"zzz"}}`, `{"completion":{"values":[],"total":0}}`},
		{`{"ref":{"type":"resource","uri":"test://template/{id}/data"},"argument":{"name":"id","value":""}}`, `{"completion":{"values":[],"total":0}}`},
	}
	for _, tt := range tests {
		if got := dispatch(t, abi.ExportComplete, `{"request":`+tt.req+`,"context":{}}`); got != tt.want {
			t.Errorf("complete %s:\ngot  %s\nwant %s", tt.req, got, tt.want)
		}
	}
}

// TestSkillFiles: the plugin ships the conformance-run skill, whose
// SKILL.md frontmatter names it after its directory.
func TestSkillFiles(t *testing.T) {
	var got abi.ListSkillsResult
	if err := json.Unmarshal([]byte(dispatch(t, abi.ExportListSkills, `{"context":{}}`)), &got); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range got.Files {
		paths = append(paths, f.Path)
		if f.Path == "conformance-run/SKILL.md" && !strings.HasPrefix(string(f.Data), "---\nname: conformance-run\n") {
			t.Errorf("SKILL.md begins %q; want its frontmatter naming conformance-run", f.Data[:min(40, len(f.Data))])
		}
	}
	if want := []string{"conformance-run/SKILL.md", "conformance-run/references/SCENARIOS.md"}; !slices.Equal(paths, want) {
		t.Errorf("skill files = %q; want %q", paths, want)
	}
}

// TestTriggersChangeTheList: every call of test_trigger_tool_change and
// test_trigger_prompt_change changes its list (the conformance suite
// calls them several times and waits for a list_changed each time, which
// mcphost sends only for a list that changed): the first adds the
// dynamic item, the second removes it.
func TestTriggersChangeTheList(t *testing.T) {
	guesttest.Install(t, nil)
	has := map[string]func() bool{
		"test_trigger_tool_change": func() bool {
			return slices.ContainsFunc(guesttest.ListTools(t), func(tl abi.Tool) bool { return tl.Name == "test_dynamic_tool" })
		},
		"test_trigger_prompt_change": func() bool {
			return slices.ContainsFunc(guesttest.ListPrompts(t), func(p abi.Prompt) bool { return p.Name == "test_dynamic_prompt" })
		},
	}
	for _, trigger := range []string{"test_trigger_tool_change", "test_trigger_prompt_change"} {
		for i, want := range []bool{true, false, true, false} {
			if res := guesttest.CallTool(t, trigger, map[string]any{}); res.IsError {
				t.Fatalf("%s call %d: %+v", trigger, i+1, res)
			}
			if got := has[trigger](); got != want {
				t.Errorf("after %s call %d: dynamic item listed = %v; want %v", trigger, i+1, got, want)
			}
		}
	}
}
