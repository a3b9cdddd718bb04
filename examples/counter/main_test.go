package main

import (
	"strings"
	"testing"

	"github.com/mcphost/mcphost/sdk-guest/guesttest"
)

func TestCount(t *testing.T) {
	guesttest.Install(t, nil)
	for i, want := range []string{"1", "2", "3"} {
		if res := guesttest.CallTool(t, "count", map[string]string{}); res.IsError || res.Content[0].Text != want {
			t.Errorf("count %d = %+v; want %s", i, res, want)
		}
	}
	if res := guesttest.CallTool(t, "count", map[string]string{"name": "other"}); res.Content[0].Text != "1" {
		t.Errorf("another counter = %+v; want 1", res)
	}
	if res := guesttest.CallTool(t, "peek", map[string]string{}); res.Content[0].Text != "3" {
		t.Errorf("peek = %+v; want 3", res)
	}
	if res := guesttest.CallTool(t, "peek", map[string]string{"name": "never"}); res.Content[0].Text != "0" {
		t.Errorf("peek of a counter never counted = %+v; want 0", res)
	}
}

// TestCountStoreDown: a KV failure is an isError result that says why.
func TestCountStoreDown(t *testing.T) {
	guesttest.Install(t, &guesttest.Host{KVErr: "kv increment: plugin state in store redis://db:6379/0: store unavailable"})
	res := guesttest.CallTool(t, "count", map[string]string{})
	if !res.IsError || !strings.Contains(res.Content[0].Text, "redis://db:6379/0") {
		t.Errorf("count with the store down = %+v; want an isError result naming the store", res)
	}
}
