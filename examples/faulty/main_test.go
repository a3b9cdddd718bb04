package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
	"github.com/mcphost/mcphost/sdk-guest/guesttest"
)

// The faults that kill the process (loop, eat, stack_overflow, exit) are
// exercised under Wasm by sdk-guest's TestWasmFaulty; here run the ones
// that are safe natively.

func TestBehavingTools(t *testing.T) {
	guesttest.Install(t, nil)
	tests := []struct {
		tool    string
		args    any
		want    string
		isError bool
	}{
		{"echo", map[string]string{"text": "still here"}, "still here", false},
		{"recovered_panic", nil, `panic in tool "recovered_panic": faulty: deliberate panic`, true},
		{"big", map[string]int{"bytes": 5}, "xxxxx", false},
		{"big", map[string]int{"bytes": -1}, "bytes must not be negative", true},
		{"slow", map[string]int{"ms": 1}, "slept ", false},
		{"flood", map[string]int{"count": 3}, "sent 3", false},
	}
	for _, tt := range tests {
		res := guesttest.CallTool(t, tt.tool, tt.args)
		if res.IsError != tt.isError || len(res.Content) != 1 || !strings.HasPrefix(res.Content[0].Text, tt.want) {
			t.Errorf("%s = %+v; want %q, isError %v", tt.tool, res, tt.want, tt.isError)
		}
	}
}

func TestJunk(t *testing.T) {
	out, err := guest.Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"junk"}}`))
	if err != nil || json.Valid(out) {
		t.Errorf("junk = %q, %v; want invalid JSON and no error", out, err)
	}
}

func TestTrapsEscapeRecovery(t *testing.T) {
	inputs := []struct{ export, input string }{
		{abi.ExportCallTool, `{"request":{"name":"panic"}}`},
		{abi.ExportReadResource, `{"request":{"uri":"faulty://trap"}}`},
		{abi.ExportGetPrompt, `{"request":{"name":"trap"}}`},
	}
	for _, in := range inputs {
		func() {
			defer func() {
				p := recover()
				if e, ok := p.(error); !ok || !strings.Contains(e.Error(), "nil pointer dereference") {
					t.Errorf("%s %s: recovered %v; want the nil dereference to escape Dispatch", in.export, in.input, p)
				}
			}()
			guest.Dispatch(in.export, []byte(in.input))
		}()
	}
}

func TestListed(t *testing.T) {
	var names []string
	for _, tl := range guesttest.ListTools(t) {
		names = append(names, tl.Name)
		if tl.Description == "" {
			t.Errorf("tool %s has no description", tl.Name)
		}
	}
	want := "panic recovered_panic stack_overflow loop eat junk big slow echo flood exit"
	if strings.Join(names, " ") != want {
		t.Errorf("tools = %v; want %s", names, want)
	}
	if r := guesttest.ListResources(t); len(r) != 2 || r[0].URI != "faulty://trap" {
		t.Errorf("resources = %+v; want faulty://trap first", r)
	}
	if res, err := guesttest.ReadResource(t, "faulty://ok"); err != nil || res.Contents[0].Text != "fine" {
		t.Errorf("read faulty://ok = %+v, %v; want fine", res, err)
	}
	if p := guesttest.ListPrompts(t); len(p) != 1 || p[0].Name != "trap" {
		t.Errorf("prompts = %+v; want trap", p)
	}
}
