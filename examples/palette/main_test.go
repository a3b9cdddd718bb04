package main

import (
	"encoding/json"
	"testing"

	guest "github.com/mcphost/mcphost/sdk-guest"
	"github.com/mcphost/mcphost/sdk-guest/guesttest"
)

func TestPalette(t *testing.T) {
	guesttest.Install(t, nil)
	cases := []struct {
		args map[string]any
		want string // structuredContent, or "" for an isError result
	}{
		{map[string]any{"base": "#336699", "steps": 2}, `{"base":"#336699","shades":["#336699","#99b2cc"]}`},
		{map[string]any{"base": "#000000"}, `{"base":"#000000","shades":["#000000","#333333","#666666","#999999","#cccccc"]}`},
		{map[string]any{"base": "blue"}, ""},
		{map[string]any{"base": "#000000", "steps": 11}, ""},
	}
	for _, c := range cases {
		res := guesttest.CallTool(t, "palette", c.args)
		if got := string(res.StructuredContent); res.IsError != (c.want == "") || c.want != "" && got != c.want {
			t.Errorf("palette %v = %s (isError %v); want %s", c.args, got, res.IsError, c.want)
		}
	}
	res := guesttest.CallTool(t, "mix", map[string]string{"a": "#000000", "b": "#ffffff"})
	if got := string(res.StructuredContent); got != `{"hex":"#808080"}` {
		t.Errorf("mix black and white = %s; want #808080", got)
	}
}

// The palette tool names its page, which is listed and read as an MCP App.
func TestPaletteApp(t *testing.T) {
	guesttest.Install(t, nil)
	var uri string
	for _, tl := range guesttest.ListTools(t) {
		var meta struct {
			UI struct{ ResourceURI string } `json:"ui"`
		}
		_ = json.Unmarshal(tl.Meta, &meta)
		switch tl.Name {
		case "palette":
			uri = meta.UI.ResourceURI
		case "mix":
			if meta.UI.ResourceURI != "" {
				t.Errorf("mix names a page %q; want none", meta.UI.ResourceURI)
			}
		}
	}
	if uri != "ui://palette/app.html" {
		t.Fatalf("palette's _meta.ui.resourceUri = %q; want ui://palette/app.html", uri)
	}
	res := guesttest.ListResources(t)
	if len(res) != 1 || res[0].URI != uri || res[0].MimeType != guest.AppMIME {
		t.Errorf("resources = %+v; want the page %s as %s", res, uri, guest.AppMIME)
	}
	got, err := guesttest.ReadResource(t, uri)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Contents) != 1 || got.Contents[0].MimeType != guest.AppMIME || got.Contents[0].Text != appHTML {
		t.Errorf("read %s = %+v; want the embedded page as %s", uri, got, guest.AppMIME)
	}
}
