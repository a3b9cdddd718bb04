package guest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// TestToolUI: a tool's UI is listed as a resource of the MCP App MIME type
// and named in the tool's _meta.ui, its other _meta members kept.
func TestToolUI(t *testing.T) {
	useRegistry(t)
	h := func(*Context, struct{}) (*Result, error) { return TextResult("ok"), nil }
	AddTool(Tool{Name: "show", UI: &UI{HTML: "<p>show</p>"}}, h)
	AddTool(Tool{Name: "pick", Meta: json.RawMessage(`{"x":1,"ui":{"old":true}}`),
		UI: &UI{HTML: "<p>pick</p>", URI: "ui://pick/view.html", Visibility: []string{"app"}}}, h)
	AddTool(Tool{Name: "plain"}, h)

	out, err := Dispatch(abi.ExportListTools, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tools abi.ListToolsResult
	if err := json.Unmarshal(out, &tools); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"show":  `{"ui":{"resourceUri":"ui://show/app.html"}}`,
		"pick":  `{"ui":{"resourceUri":"ui://pick/view.html","visibility":["app"]},"x":1}`,
		"plain": ``,
	}
	for _, tl := range tools.Tools {
		if string(tl.Meta) != want[tl.Name] {
			t.Errorf("%s _meta = %s; want %s", tl.Name, tl.Meta, want[tl.Name])
		}
	}
	for uri, html := range map[string]string{"ui://show/app.html": "<p>show</p>", "ui://pick/view.html": "<p>pick</p>"} {
		out, err := Dispatch(abi.ExportReadResource, input(t, abi.ReadResourceParams{URI: uri}, ""))
		var res abi.ReadResourceResult
		if err == nil {
			err = json.Unmarshal(out, &res)
		}
		if err != nil || len(res.Contents) != 1 || res.Contents[0].URI != uri || res.Contents[0].MimeType != AppMIME || res.Contents[0].Text != html {
			t.Errorf("read %s = %s, %v; want %q as %s", uri, out, err, html, AppMIME)
		}
	}
	out, _ = Dispatch(abi.ExportListResources, nil)
	if n := strings.Count(string(out), `"mimeType":"text/html;profile=mcp-app"`); n != 2 {
		t.Errorf("list_resources = %s; want the two pages", out)
	}
}

func TestToolUIBadURI(t *testing.T) {
	useRegistry(t)
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), `want a ui:// URI`) {
			t.Errorf("recovered %v; want a panic naming the URI", r)
		}
	}()
	AddTool(Tool{Name: "x", UI: &UI{HTML: "<p/>", URI: "https://example.com/x.html"}},
		func(*Context, struct{}) (*Result, error) { return nil, nil })
}
