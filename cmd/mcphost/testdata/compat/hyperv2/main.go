//go:build wasip1

// Command hyperv2 is a hyper-mcp v2 plugin written the way hyper-mcp's Rust
// template writes one, without mcphost's SDK: it deserializes every input
// strictly (a context without "id" or "_meta" is refused with serde's
// message), keeps state in its one instance (a counter, Extism vars, tools
// added at run time, announced with notify_tool_list_changed), declares a
// tool whose schema is not valid JSON Schema (as a real Zig servlet does),
// and reads secrets through get_keyring_secret.
package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcphost/mcphost/internal/pdk"
)

func main() {}

type context struct {
	ID   json.RawMessage `json:"id"`
	Meta json.RawMessage `json:"_meta"`
}

// envelope checks the input as serde would deserialize hyper-mcp's
// PluginRequestContext: id a number or a string, _meta an object, both
// required.
func envelope(wantRequest bool) (json.RawMessage, error) {
	var in map[string]json.RawMessage
	if err := json.Unmarshal(pdk.Input(), &in); err != nil {
		return nil, err
	}
	raw, ok := in["context"]
	if !ok {
		return nil, fmt.Errorf("missing field `context`")
	}
	var c map[string]json.RawMessage
	if err := json.Unmarshal(raw, &c); err != nil || c == nil {
		return nil, fmt.Errorf("invalid type: expected struct PluginRequestContext")
	}
	id, ok := c["id"]
	if !ok {
		return nil, fmt.Errorf("missing field `id`")
	}
	if s := strings.TrimSpace(string(id)); s == "" || (s[0] != '"' && (s[0] < '0' || s[0] > '9') && s[0] != '-') {
		return nil, fmt.Errorf("data did not match any variant of untagged enum NumberOrString")
	}
	meta, ok := c["_meta"]
	if !ok {
		return nil, fmt.Errorf("missing field `_meta`")
	}
	if m := strings.TrimSpace(string(meta)); m == "" || m[0] != '{' {
		return nil, fmt.Errorf("invalid type: expected a map for `_meta`")
	}
	req, ok := in["request"]
	if wantRequest && !ok {
		return nil, fmt.Errorf("missing field `request`")
	}
	return req, nil
}

var (
	count int      // lives as long as the instance
	added []string // tools added at run time
)

const obj = `{"type":"object"}`

var static = []string{
	`{"name":"count","description":"counts calls on this instance","inputSchema":` + obj + `}`,
	`{"name":"add_tool","description":"adds a tool","inputSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`,
	// "required" inside "properties" is not valid JSON Schema.
	`{"name":"get_item","description":"by id","inputSchema":{"type":"object","properties":{"id":{"type":"string"},"required":["id"]}}}`,
	`{"name":"secret","description":"reads a keyring secret","inputSchema":` + obj + `}`,
	`{"name":"vars","description":"counts in an Extism var","inputSchema":` + obj + `}`,
	`{"name":"config","description":"reads a config key","inputSchema":` + obj + `}`,
	`{"name":"http","description":"GETs a URL with a header","inputSchema":` + obj + `}`,
	`{"name":"log","description":"logs at each level","inputSchema":` + obj + `}`,
	`{"name":"clock","description":"the time","inputSchema":` + obj + `}`,
	`{"name":"fail","description":"fails with its own message","inputSchema":` + obj + `}`,
	`{"name":"envelope","description":"returns its input","inputSchema":` + obj + `}`,
}

//go:wasmexport list_tools
func listTools() int32 {
	if _, err := envelope(false); err != nil {
		return pdk.Fail(err.Error())
	}
	tools := append([]string(nil), static...)
	for _, n := range added {
		tools = append(tools, `{"name":"`+n+`","description":"added at run time","inputSchema":`+obj+`}`)
	}
	pdk.Output([]byte(`{"tools":[` + strings.Join(tools, ",") + `]}`))
	return 0
}

func text(s string) int32 {
	b, _ := json.Marshal(s)
	pdk.Output([]byte(`{"content":[{"type":"text","text":` + string(b) + `}]}`))
	return 0
}

//go:wasmexport call_tool
func callTool() int32 {
	input := pdk.Input()
	raw, err := envelope(true)
	if err != nil {
		return pdk.Fail(err.Error())
	}
	var req struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return pdk.Fail(err.Error())
	}
	a := req.Arguments
	switch req.Name {
	case "count":
		count++
		return text(strconv.Itoa(count))
	case "add_tool":
		added = append(added, a["name"])
		pdk.NotifyToolListChanged()
		return text("added " + a["name"])
	case "get_item":
		return text("item " + a["id"])
	case "secret":
		entry, _ := json.Marshal(map[string]string{"service": a["service"], "user": a["user"]})
		return text(string(pdk.Secret(entry)))
	case "vars":
		n, _ := strconv.Atoi(string(pdk.Var("n")))
		n++
		pdk.SetVar("n", []byte(strconv.Itoa(n)))
		return text(strconv.Itoa(n))
	case "config":
		v, ok := pdk.Config(a["key"])
		if !ok {
			return text("<unset>")
		}
		return text(v)
	case "http":
		r, _ := json.Marshal(map[string]any{"url": a["url"], "method": "GET", "headers": map[string]string{"X-Compat": "yes"}})
		status, body := pdk.HTTP(r, nil)
		return text(fmt.Sprintf("%d %s", status, body))
	case "log":
		for _, l := range []string{"info", "warn", "error"} {
			pdk.Log(l, "compat log at "+l)
		}
		return text("logged")
	case "clock":
		return text(strconv.FormatInt(time.Now().Unix(), 10))
	case "fail":
		return pdk.Fail("the plugin's own message: " + a["why"])
	case "envelope":
		return text(string(input))
	}
	for _, n := range added {
		if n == req.Name {
			return text("dynamic " + n)
		}
	}
	return pdk.Fail("unknown tool " + req.Name)
}
