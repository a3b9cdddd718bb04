package abi

import "encoding/json"

// Version is the version of mcphost's additions to the hyper-mcp v2 ABI.
// A guest built with sdk-guest reports it through [ExportABIVersion]; a guest
// that does not is treated as plain hyper-mcp v2. Version 2 adds the
// http host function and [ExportCallToolFrame]; version 3,
// [ExportCallToolMembers].
const Version = 3

// Exports of the v2 ABI (hyper-mcp compatible).
const (
	ExportListTools             = "list_tools"
	ExportCallTool              = "call_tool"
	ExportListResources         = "list_resources"
	ExportListResourceTemplates = "list_resource_templates"
	ExportReadResource          = "read_resource"
	ExportListPrompts           = "list_prompts"
	ExportGetPrompt             = "get_prompt"
	ExportComplete              = "complete"
	ExportOnRootsListChanged    = "on_roots_list_changed"

	// ExportABIVersion is mcphost's optional addition: a plain Wasm export
	// with no parameters returning the guest's [Version] as i32.
	ExportABIVersion = "mcphost_abi_version"

	// ExportStateless is mcphost's optional declaration that the guest
	// keeps no state between calls, so that any instance may serve any
	// call and the host may run a pool of them. Only its presence counts
	// (a plain export, never called). A guest without it runs as hyper-mcp
	// runs every plugin: one long-lived instance, calls one at a time.
	// Guests built with sdk-guest export it by importing
	// sdk-guest/stateless.
	ExportStateless = "mcphost_stateless"
)

// Exports of the v1 ABI (mcp.run servlets; tools only).
const (
	ExportDescribe = "describe" // input empty, output ListToolsResult
	ExportCall     = "call"     // input {"params":CallToolParams}, output CallToolResult
)

// HostNamespace is the Wasm import module of mcphost's host functions.
const HostNamespace = "extism:host/user"

// Host functions (imports in [HostNamespace]). Names, signatures and JSON
// shapes are hyper-mcp's, because wazero checks import signatures exactly:
// a function with a payload takes one i64 (the Extism memory offset of its
// JSON), one without takes nothing; requests return one i64 (the offset of
// the JSON reply), notifications return nothing. The comment on each gives
// its payload → reply.
const (
	HostLog                 = "notify_logging_message"           // LoggingMessageParams → nothing
	HostProgress            = "notify_progress"                  // ProgressParams → nothing
	HostSample              = "create_message"                   // CreateMessageParams → CreateMessageResult
	HostElicit              = "create_elicitation"               // ElicitParams → ElicitResult
	HostListRoots           = "list_roots"                       // nothing → ListRootsResult
	HostToolListChanged     = "notify_tool_list_changed"         // nothing → nothing
	HostPromptListChanged   = "notify_prompt_list_changed"       // nothing → nothing
	HostResourceListChanged = "notify_resource_list_changed"     // nothing → nothing
	HostResourceUpdated     = "notify_resource_updated"          // {"uri":…} → nothing
	HostURLElicitComplete   = "notify_url_elicitation_completed" // {"elicitationId":…} → nothing
	HostKeyringSecret       = "get_keyring_secret"               // KeyringEntry → the secret's raw bytes
	HostKV                  = "kv"                               // KVRequest → KVReply (mcphost addition)
	HostHTTP                = "http"                             // HTTPRequest → HTTPReply (mcphost addition)
)

// HTTPRequest is the payload of [HostHTTP]: an outbound HTTP request the
// host makes for the guest under the same rules as Extism's http_request
// (allowed_hosts, may_request_hosts, the response-size limit). Unlike
// http_request, whose only way to fail is to trap the guest (losing its
// instance's state), a request the host refuses or cannot complete
// replies {"error":"…"} ([HTTPReply].Error), and the guest carries on.
type HTTPRequest struct {
	URL     string            `json:"url"`
	Method  string            `json:"method,omitempty"` // "" means GET
	Headers map[string]string `json:"headers,omitempty"`
	Body    []byte            `json:"body,omitempty"` // base64 in JSON
}

// HTTPReply is the reply of [HostHTTP]: the response, or Error (with
// Refused when the plugin's rules, or a person asked for consent, refused
// the destination, or the answer is still to come: an input_required
// round in the 2026-07-28 era, after which the call is run again).
// Header names are lower case; repeated headers are joined with ",".
type HTTPReply struct {
	Status  int               `json:"status,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    []byte            `json:"body,omitempty"` // base64 in JSON
	Error   string            `json:"error,omitempty"`
	Refused bool              `json:"refused,omitempty"`
}

// KV operations ([KVRequest].Op).
const (
	KVGet       = "get"       // Key → Value, Found
	KVSet       = "set"       // Key, Value → {}
	KVDelete    = "delete"    // Key → {}
	KVExists    = "exists"    // Key → Found
	KVKeys      = "keys"      // Cursor, Limit → Keys, Cursor ("" at the end)
	KVIncrement = "increment" // Key, Delta → Number (the new value)
)

// KVRequest is the payload of [HostKV]: one operation on the plugin's own
// key-value bucket, which every replica of the server shares when it has
// a store (issue 31), and which outlives the plugin's instances. A reply
// that fails is {"error":"…"} (the store is down, a quota is reached).
type KVRequest struct {
	Op     string `json:"op"`
	Key    string `json:"key,omitempty"`
	Value  []byte `json:"value,omitempty"` // base64 in JSON
	Delta  int64  `json:"delta,omitempty"`
	Cursor string `json:"cursor,omitempty"`
	Limit  int    `json:"limit,omitempty"` // keys per page; 0 means 100
}

// KVReply is the reply of [HostKV].
type KVReply struct {
	Value  []byte   `json:"value,omitempty"` // base64 in JSON
	Found  bool     `json:"found,omitempty"`
	Keys   []string `json:"keys,omitempty"`
	Cursor string   `json:"cursor,omitempty"`
	Number int64    `json:"number,omitempty"`
}

// KeyringEntry is the payload of [HostKeyringSecret], hyper-mcp's
// KeyringEntryId. The reply is the secret's bytes, not JSON, and empty
// when the plugin may not read it (it is not in its allowed_secrets) or
// it is not set: a guest cannot tell the two apart, as with hyper-mcp.
type KeyringEntry struct {
	Service string `json:"service"`
	User    string `json:"user"`
}

// Context travels with every v2 call as the "context" member of the input.
// It tells the guest which client request it serves.
type Context struct {
	// ID is the JSON-RPC id of the client request, exactly as sent.
	ID json.RawMessage `json:"id,omitempty"`
	// Meta is the request's params._meta, exactly as sent (it carries
	// progressToken, among others).
	Meta json.RawMessage `json:"_meta,omitempty"`
	// ProtocolVersion is the version the session negotiated (mcphost addition).
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// Plugin is the plugin's configured name (mcphost addition).
	Plugin string `json:"plugin,omitempty"`
}

// Input is the envelope of every v2 export's input.
type Input struct {
	Request json.RawMessage `json:"request,omitempty"`
	Context Context         `json:"context"`
}

// V1CallInput is the input of the v1 "call" export.
type V1CallInput struct {
	Params CallToolParams `json:"params"`
}

// HostFunc describes one host function: its signature and the MCP message
// the host turns it into.
type HostFunc struct {
	Name string
	// Method is the MCP request or notification it becomes; "" for a
	// function the host serves itself without the client
	// (get_keyring_secret).
	Method  string
	Payload bool // takes one i64: the offset of a JSON payload
	Reply   bool // a request: returns one i64, the offset of the JSON reply
}

// HostFuncs is every host function in [HostNamespace], with hyper-mcp's
// signatures.
var HostFuncs = []HostFunc{
	{Name: HostLog, Method: "notifications/message", Payload: true},
	{Name: HostProgress, Method: "notifications/progress", Payload: true},
	{Name: HostSample, Method: "sampling/createMessage", Payload: true, Reply: true},
	{Name: HostElicit, Method: "elicitation/create", Payload: true, Reply: true},
	{Name: HostListRoots, Method: "roots/list", Reply: true},
	{Name: HostToolListChanged, Method: "notifications/tools/list_changed"},
	{Name: HostPromptListChanged, Method: "notifications/prompts/list_changed"},
	{Name: HostResourceListChanged, Method: "notifications/resources/list_changed"},
	{Name: HostResourceUpdated, Method: "notifications/resources/updated", Payload: true},
	{Name: HostURLElicitComplete, Method: "notifications/elicitation/complete", Payload: true},
	{Name: HostKeyringSecret, Payload: true, Reply: true},
	{Name: HostKV, Payload: true, Reply: true},
	{Name: HostHTTP, Payload: true, Reply: true},
}
