package protocol

import (
	"encoding/json"

	"github.com/mcphost/mcphost/host/internal/jsonrpc"
)

// Keys of the stateless era's per-request _meta that say a request
// belongs to it.
const (
	MetaVersion      = "io.modelcontextprotocol/protocolVersion"
	MetaCapabilities = "io.modelcontextprotocol/clientCapabilities"
)

// Error codes the 2026-07-28 revision adds.
const (
	CodeHeaderMismatch      = -32020 // an HTTP header disagrees with the body
	CodeMissingCapability   = -32021
	CodeUnsupportedProtocol = -32022
)

// HasStatelessMeta reports whether params carry any of the stateless
// era's _meta keys: such a request is served statelessly even on a
// connection that never sent initialize (stdio).
func HasStatelessMeta(meta json.RawMessage) bool {
	return jsonrpc.Member(meta, MetaVersion) != nil || jsonrpc.Member(meta, MetaCapabilities) != nil
}

// IsHandshakeInitialize reports whether msg is an initialize request of
// the handshake revisions, which carries params.protocolVersion; one
// without it (a stateless-era client probing) is a method that era does
// not define.
func IsHandshakeInitialize(msg *jsonrpc.Message) bool {
	return string(msg.Method) == "initialize" && msg.ParamMembers.Get("protocolVersion") != nil
}
