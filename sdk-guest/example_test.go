package guest_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing/fstest"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
	"github.com/mcphost/mcphost/sdk-guest/guesttest"
)

// A plugin registers a typed tool in an init function. Off Wasm the same
// code runs natively: guest.Dispatch is what the call_tool export runs, so
// this example calls the tool exactly as mcphost would (in a plugin's own
// tests, sdk-guest/guesttest's CallTool builds the input and decodes the
// result).
func ExampleAddTool() {
	type In struct {
		Text string `json:"text" jsonschema:"the text to hash"`
	}
	guest.AddTool(guest.Tool{Name: "sha256", Description: "SHA-256 of a text"},
		func(_ *guest.Context, in In) (*guest.Result, error) {
			sum := sha256.Sum256([]byte(in.Text))
			return guest.TextResult(hex.EncodeToString(sum[:])), nil
		})

	out, err := guest.Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"sha256","arguments":{"text":"hello"}},"context":{}}`))
	fmt.Println(string(out), err)

	// Arguments that do not fit In are the model's mistake: a result with
	// isError set, so it can correct itself, not a failed export.
	out, err = guest.Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"sha256","arguments":{"text":42}},"context":{}}`))
	fmt.Println(strings.Contains(string(out), `"isError":true`), err)
	// Output:
	// {"content":[{"type":"text","text":"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"}]} <nil>
	// true <nil>
}

// A handler that returns its Context's own result (ctx.TextResult) costs
// no allocation for it: the SDK encodes the result when the handler
// returns and reuses its memory for a later call. Return it; keep
// guest.TextResult's for results that outlive the call.
func ExampleContext_TextResult() {
	type In struct {
		Name string `json:"name"`
	}
	guest.AddTool(guest.Tool{Name: "greet", Description: "Greets someone"},
		func(ctx *guest.Context, in In) (*guest.Result, error) {
			return ctx.TextResult("hello, " + in.Name), nil
		})

	out, err := guest.Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"greet","arguments":{"name":"Ada"}},"context":{}}`))
	fmt.Println(string(out), err)
	// Output:
	// {"content":[{"type":"text","text":"hello, Ada"}]} <nil>
}

// A tool with typed output: the result carries Out as structuredContent,
// and the listing carries the output schema derived from Out.
func ExampleAddToolOut() {
	type In struct {
		Words string `json:"words"`
	}
	type Out struct {
		Count int `json:"count"`
	}
	guest.AddToolOut(guest.Tool{Name: "count_words"},
		func(_ *guest.Context, in In) (Out, error) {
			return Out{Count: len(strings.Fields(in.Words))}, nil
		})

	out, err := guest.Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"count_words","arguments":{"words":"one two three"}},"context":{}}`))
	fmt.Println(string(out), err)
	// Output:
	// {"content":[{"type":"text","text":"{\"count\":3}"}],"structuredContent":{"count":3}} <nil>
}

// A static resource: a fixed URI the client lists and reads.
func ExampleAddResource() {
	guest.AddResource(abi.Resource{URI: "memo://motd", Name: "motd", MimeType: "text/plain"},
		func(_ *guest.Context, uri string) (*abi.ReadResourceResult, error) {
			return guest.TextResource(uri, "text/plain", "be kind"), nil
		})

	out, err := guest.Dispatch(abi.ExportReadResource, []byte(`{"request":{"uri":"memo://motd"},"context":{}}`))
	fmt.Println(string(out), err)

	// A URI nothing serves fails the export with guest.ErrNotFound's
	// message, which the host turns into MCP's resource-not-found error.
	_, err = guest.Dispatch(abi.ExportReadResource, []byte(`{"request":{"uri":"memo://nothing"},"context":{}}`))
	fmt.Println(err != nil)
	// Output:
	// {"contents":[{"uri":"memo://motd","mimeType":"text/plain","text":"be kind"}]} <nil>
	// true
}

// A resource template serves a family of URIs; the handler gets the
// template's variables by name.
func ExampleAddResourceTemplate() {
	guest.AddResourceTemplate(abi.ResourceTemplate{URITemplate: "greeting://{lang}/{name}", Name: "greeting"},
		func(_ *guest.Context, uri string, vars map[string]string) (*abi.ReadResourceResult, error) {
			hello := map[string]string{"en": "Hello", "fr": "Bonjour"}[vars["lang"]]
			if hello == "" {
				return nil, guest.ErrNotFound
			}
			return guest.TextResource(uri, "text/plain", hello+", "+vars["name"]), nil
		})

	out, err := guest.Dispatch(abi.ExportReadResource, []byte(`{"request":{"uri":"greeting://fr/Ada"},"context":{}}`))
	fmt.Println(string(out), err)
	_, err = guest.Dispatch(abi.ExportReadResource, []byte(`{"request":{"uri":"greeting://xx/Ada"},"context":{}}`))
	fmt.Println(errors.Is(err, guest.ErrNotFound))
	// Output:
	// {"contents":[{"uri":"greeting://fr/Ada","mimeType":"text/plain","text":"Bonjour, Ada"}]} <nil>
	// true
}

// A prompt turns its arguments into messages for the model.
func ExampleAddPrompt() {
	guest.AddPrompt(abi.Prompt{Name: "review", Arguments: []abi.PromptArgument{{Name: "lang", Required: true}}},
		func(_ *guest.Context, args map[string]string) (*abi.GetPromptResult, error) {
			return &abi.GetPromptResult{Messages: []abi.PromptMessage{
				guest.UserMessage(guest.Text("Review this " + args["lang"] + " code.")),
			}}, nil
		})

	out, err := guest.Dispatch(abi.ExportGetPrompt, []byte(`{"request":{"name":"review","arguments":{"lang":"Go"}},"context":{}}`))
	fmt.Println(string(out), err)
	// Output:
	// {"messages":[{"role":"user","content":{"type":"text","text":"Review this Go code."}}]} <nil>
}

// Completion suggests values for a prompt's argument as the person types.
func ExampleCompletePromptArg() {
	guest.AddPrompt(abi.Prompt{Name: "translate", Arguments: []abi.PromptArgument{{Name: "to"}}},
		func(_ *guest.Context, args map[string]string) (*abi.GetPromptResult, error) {
			return &abi.GetPromptResult{Messages: []abi.PromptMessage{
				guest.UserMessage(guest.Text("Translate to " + args["to"] + ".")),
			}}, nil
		})
	guest.CompletePromptArg("translate", "to",
		func(_ *guest.Context, value string, _ map[string]string) ([]string, error) {
			return guest.FilterPrefix([]string{"English", "French", "Frisian", "German"}, value), nil
		})

	out, err := guest.Dispatch(abi.ExportComplete, []byte(`{"request":{"ref":{"type":"ref/prompt","name":"translate"},"argument":{"name":"to","value":"fr"}},"context":{}}`))
	fmt.Println(string(out), err)
	// Output:
	// {"completion":{"values":["French","Frisian"],"total":2}} <nil>
}

// Skills ship with the plugin as files, usually an embed.FS; mcphost reads
// them through the mcphost_list_skills export when it loads the plugin.
func ExampleAddSkills() {
	guest.AddSkills(fstest.MapFS{
		"skills/release-notes/SKILL.md":       {Data: []byte("---\nname: release-notes\ndescription: Write release notes from merged changes.\n---\nList the changes by kind.\n")},
		"skills/release-notes/template.md":    {Data: []byte("## Added\n")},
		"skills/release-notes/.draft-ignored": {Data: []byte("hidden files are left out")},
	})

	out, err := guest.Dispatch(abi.ExportListSkills, nil)
	var res abi.ListSkillsResult
	if err == nil {
		err = json.Unmarshal(out, &res)
	}
	var paths []string
	for _, f := range res.Files {
		paths = append(paths, f.Path)
	}
	slices.Sort(paths)
	fmt.Println(slices.Compact(paths), err)
	// Output:
	// [skills/release-notes/SKILL.md skills/release-notes/template.md] <nil>
}

// A tool with an MCP App: clients that support apps show the page when
// the tool is called. The page is served as a ui:// resource and the tool's
// _meta names it.
func ExampleUI() {
	guest.AddTool(guest.Tool{Name: "clock", UI: &guest.UI{HTML: "<!doctype html><p id=t></p>"}},
		func(*guest.Context, struct{}) (*guest.Result, error) {
			return guest.TextResult("12:00"), nil
		})

	out, err := guest.Dispatch(abi.ExportListTools, nil)
	var list abi.ListToolsResult
	if err == nil {
		err = json.Unmarshal(out, &list)
	}
	for _, t := range list.Tools {
		if t.Name == "clock" {
			fmt.Println(string(t.Meta))
		}
	}
	out, err = guest.Dispatch(abi.ExportReadResource, []byte(`{"request":{"uri":"ui://clock/app.html"},"context":{}}`))
	var page abi.ReadResourceResult
	if err == nil {
		err = json.Unmarshal(out, &page)
	}
	for _, c := range page.Contents {
		fmt.Println(c.MimeType, c.Text, err)
	}
	// Output:
	// {"ui":{"resourceUri":"ui://clock/app.html"}}
	// text/html;profile=mcp-app <!doctype html><p id=t></p> <nil>
}

// guest.KV keeps state outside the instance, in the server's store; a
// counter there counts across instances and replicas. Natively, guesttest's
// Host keeps it in memory.
func ExampleKVStore() {
	defer guesttest.Use(&guesttest.Host{})()
	guest.AddTool(guest.Tool{Name: "visit"},
		func(*guest.Context, struct{}) (*guest.Result, error) {
			n, err := guest.KV.Increment("visits", 1)
			if err != nil {
				return nil, err // the person sees why: the store is down, or a quota is reached
			}
			return guest.TextResult(fmt.Sprintf("visit %d", n)), nil
		})

	for range 2 {
		out, err := guest.Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"visit"},"context":{}}`))
		fmt.Println(string(out), err)
	}
	v, ok, err := guest.KV.Get("visits")
	fmt.Println(string(v), ok, err)
	// Output:
	// {"content":[{"type":"text","text":"visit 1"}]} <nil>
	// {"content":[{"type":"text","text":"visit 2"}]} <nil>
	// 2 true <nil>
}

// guest.HTTP goes through the host, which enforces the plugin's
// allowed_hosts. A refused destination is a *guest.HostError with Refused
// set; the call, and the instance, go on.
func ExampleHTTP() {
	defer guesttest.Use(&guesttest.Host{HTTP: func(r *guest.HTTPRequest) (*guest.HTTPResponse, error) {
		// Stands in for mcphost with allowed_hosts = ["api.example.com"].
		if !strings.HasPrefix(r.URL, "https://api.example.com/") {
			return nil, &guest.HostError{Func: abi.HostHTTP, Message: "host is not allowed", Refused: true}
		}
		return &guest.HTTPResponse{Status: 200, Header: map[string]string{"content-type": "text/plain"}, Body: []byte("pong")}, nil
	}})()

	resp, err := guest.HTTP(&guest.HTTPRequest{URL: "https://api.example.com/ping"})
	fmt.Println(resp.Status, resp.HeaderValue("Content-Type"), string(resp.Body), err)

	_, err = guest.HTTP(&guest.HTTPRequest{URL: "https://elsewhere.example/"})
	var he *guest.HostError
	fmt.Println(errors.As(err, &he) && he.Refused, err)
	// Output:
	// 200 text/plain pong <nil>
	// true http: host http: host is not allowed
}

// A handler may add tools at run time; NotifyToolListChanged has the host
// re-read the list and tell the clients. Such a tool lives in this instance
// only: see NewSharedTools for tools every instance and replica serves.
func ExampleNotifyToolListChanged() {
	h := &guesttest.Host{}
	defer guesttest.Use(h)()
	guest.AddTool(guest.Tool{Name: "unlock"},
		func(*guest.Context, struct{}) (*guest.Result, error) {
			guest.AddTool(guest.Tool{Name: "secret"}, func(*guest.Context, struct{}) (*guest.Result, error) {
				return guest.TextResult("42"), nil
			})
			return guest.TextResult("unlocked"), guest.NotifyToolListChanged()
		})

	out, err := guest.Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"unlock"},"context":{}}`))
	fmt.Println(string(out), err, len(h.Calls(abi.HostToolListChanged)))
	out, err = guest.Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"secret"},"context":{}}`))
	fmt.Println(string(out), err)
	// Output:
	// {"content":[{"type":"text","text":"unlocked"}]} <nil> 1
	// {"content":[{"type":"text","text":"42"}]} <nil>
}

// A *guest.Context is a context.Context that reports the client's
// cancellation: a long handler checks it and returns early, keeping its
// instance. guesttest's Host says when the client cancels.
func ExampleContext() {
	asked := 0
	defer guesttest.Use(&guesttest.Host{Cancelled: func() bool { asked++; return asked > 3 }})()
	guest.AddTool(guest.Tool{Name: "crunch"},
		func(ctx *guest.Context, _ struct{}) (*guest.Result, error) {
			done, err := crunch(ctx, 100)
			if err != nil {
				return guest.Errorf("stopped after %d of 100 steps: %v", done, err), nil
			}
			return guest.TextResult("done"), nil
		})

	out, err := guest.Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"crunch"},"context":{}}`))
	fmt.Println(string(out), err)
	// Output:
	// {"content":[{"type":"text","text":"stopped after 3 of 100 steps: context canceled"}],"isError":true} <nil>
}

// crunch is code that takes any context.Context.
func crunch(ctx context.Context, steps int) (int, error) {
	for i := range steps {
		if err := ctx.Err(); err != nil {
			return i, err
		}
	}
	return steps, nil
}

// Progress and log messages reach the client through the host while the
// tool runs. Progress is sent only when the client asked for it with a
// progress token.
func ExampleContext_Progress() {
	h := &guesttest.Host{}
	defer guesttest.Use(h)()
	guest.AddTool(guest.Tool{Name: "index"},
		func(ctx *guest.Context, _ struct{}) (*guest.Result, error) {
			for i := 1; i <= 3; i++ {
				if err := ctx.Progress(float64(i), 3, "indexing"); err != nil {
					return nil, err
				}
			}
			return guest.TextResult("indexed"), ctx.Log(guest.LevelInfo, "index rebuilt")
		})

	// The host passes the request's _meta, with the client's progress
	// token, in the context.
	out, err := guest.Dispatch(abi.ExportCallTool, []byte(`{"request":{"name":"index"},"context":{"_meta":{"progressToken":"p1"}}}`))
	fmt.Println(string(out), err)
	for _, c := range h.Calls("") {
		fmt.Println(c.Name, string(c.Payload))
	}
	// Output:
	// {"content":[{"type":"text","text":"indexed"}]} <nil>
	// notify_progress {"progressToken":"p1","progress":1,"total":3,"message":"indexing"}
	// notify_progress {"progressToken":"p1","progress":2,"total":3,"message":"indexing"}
	// notify_progress {"progressToken":"p1","progress":3,"total":3,"message":"indexing"}
	// notify_logging_message {"level":"info","data":"index rebuilt"}
}
