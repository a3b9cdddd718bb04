package guest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/abi"
)

// AppMIME is the MIME type of an MCP App's page (SEP-1865).
const AppMIME = "text/html;profile=mcp-app"

// UI is a tool's MCP App (SEP-1865, the io.modelcontextprotocol/ui
// extension): an HTML page a client that supports apps shows in a
// sandboxed iframe when the tool is called. The page talks to the client
// over postMessage JSON-RPC (ui/initialize, then it hears the tool's
// input and result and may call the server's tools); the
// @modelcontextprotocol/ext-apps App class speaks it, or a page can
// speak it by hand (examples/apps).
//
// Registering the tool registers the page as a resource and sets the
// tool's _meta.ui.resourceUri to it. What the page may load from other
// origins is not the plugin's to say: mcphost serves it with the CSP of
// the plugin's [plugin.ui] table (none by default).
type UI struct {
	// HTML is the page: a complete document, with its scripts and
	// styles inline (no outside origin is reachable by default).
	HTML string
	// URI names the page's resource; "" means "ui://<tool name>/app.html".
	// It must start with "ui://". Tools may share a page by naming
	// the same URI.
	URI string
	// Visibility is _meta.ui.visibility: who may call the tool. nil
	// means both ("model" and "app"); []string{"app"} hides it from the
	// model, for tools only the page calls.
	Visibility []string
}

// appDef registers tool's page (tool.UI, set) and returns def with the
// tool's _meta.ui naming it.
func appDef(tool Tool, def abi.Tool) abi.Tool {
	ui := tool.UI
	uri := ui.URI
	if uri == "" {
		uri = "ui://" + tool.Name + "/app.html"
	}
	if !strings.HasPrefix(uri, "ui://") || len(uri) == len("ui://") {
		panic(fmt.Sprintf("guest: tool %q: UI.URI %q: want a ui:// URI", tool.Name, uri))
	}
	var meta map[string]json.RawMessage
	if len(def.Meta) > 0 {
		if err := json.Unmarshal(def.Meta, &meta); err != nil {
			panic(fmt.Sprintf("guest: tool %q: Meta is not a JSON object: %v", tool.Name, err))
		}
	}
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	m := map[string]any{"resourceUri": uri}
	if ui.Visibility != nil {
		m["visibility"] = ui.Visibility
	}
	meta["ui"], _ = json.Marshal(m)
	def.Meta, _ = json.Marshal(meta)
	html := ui.HTML
	AddResource(abi.Resource{URI: uri, Name: tool.Name + " app", MimeType: AppMIME},
		func(_ *Context, uri string) (*abi.ReadResourceResult, error) {
			return TextResource(uri, AppMIME, html), nil
		})
	return def
}
