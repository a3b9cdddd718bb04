// Package guest is the Go SDK for writing mcphost plugins.
//
// A plugin is a standard Go program built as a WASI reactor:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o plugin.wasm .
//
// It registers its tools, resources, prompts and completions in init
// functions, and this package does the rest: it defines every export of the
// hyper-mcp v2 ABI (list_tools, call_tool, list_resources,
// list_resource_templates, read_resource, list_prompts, get_prompt,
// complete, on_roots_list_changed) plus mcphost_abi_version and
// mcphost_call_tool_members (a tool call as an abi.CallFrame, no envelope), moves bytes
// through the Extism kernel (extism:host/env), decodes the JSON envelopes of
// package abi, recovers handler panics, and wraps the host functions of
// extism:host/user (logging, progress, sampling, elicitation, roots,
// list_changed and resource-updated notifications).
//
//	type In struct {
//		Text string `json:"text" jsonschema:"the text to hash"`
//	}
//
//	func main() {}
//
//	func init() {
//		guest.AddTool(guest.Tool{Name: "sha256", Description: "SHA-256 of a text"},
//			func(ctx *guest.Context, in In) (*guest.Result, error) {
//				sum := sha256.Sum256([]byte(in.Text))
//				return guest.TextResult(hex.EncodeToString(sum[:])), nil
//			})
//	}
//
// Input schemas are derived from the Go type of the handler's argument (see
// [SchemaFor]); [AddToolOut] also derives an output schema and returns
// structured content; [AddToolRaw] passes a hand-written schema through
// verbatim.
//
// Off Wasm (GOOS other than wasip1) the package builds too: [Dispatch] runs
// the same code the exports run, and [SetHostForTesting] (or the guesttest
// package) stands in for the host, so a plugin's handlers get ordinary unit
// tests with go test.
//
// What this package does not do: it does not enforce anything. Limits,
// allowed hosts and paths, timeouts and the validation of arguments against
// schemas are the host's job; the SDK only reports what it is given.
package guest
