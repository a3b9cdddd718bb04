package main

import (
	"testing"

	"github.com/mcphost/mcphost/sdk-guest/guesttest"
)

func TestEcho(t *testing.T) {
	guesttest.Install(t, nil)
	for _, text := range []string{"", "hello", "ünïcødé \n\t\"quoted\""} {
		res := guesttest.CallTool(t, "echo", map[string]string{"text": text})
		if res.IsError || len(res.Content) != 1 || res.Content[0].Text != text {
			t.Errorf("echo %q = %+v; want the text back", text, res)
		}
	}
	if tools := guesttest.ListTools(t); len(tools) != 1 || tools[0].Name != "echo" || tools[0].Description == "" {
		t.Errorf("tools = %+v; want one described echo tool", tools)
	}
}

func BenchmarkEcho(b *testing.B) {
	guesttest.Install(b, nil)
	b.ReportAllocs()
	for b.Loop() {
		guesttest.CallTool(b, "echo", map[string]string{"text": "hello"})
	}
}
