package abi

import (
	"encoding/binary"
	"math"
)

// ExportCallToolFrame is mcphost's second door to call_tool (ABI version
// 2): the same question and the same CallToolResult output, but its input
// is a [CallFrame], the parts of the request the host has already parsed,
// laid out so that the guest finds each by its length instead of scanning
// a JSON envelope. A host calls it instead of call_tool when the guest
// exports it; hyper-mcp and mcp.run plugins never do, and keep call_tool.
const ExportCallToolFrame = "mcphost_call_tool"

// CallFrame is the input of [ExportCallToolFrame]: the tool's own name,
// the call's context (what [Context] carries, each member as the
// envelope's context would hold it: ID and Meta compact JSON, the two
// strings plain), and the arguments as the client sent them (valid JSON,
// checked by the host), empty when it sent none.
//
// On the wire it is five fields, each a little-endian uint32 length and
// that many bytes, in the order Name, ID, Meta, ProtocolVersion, Plugin,
// and then the arguments, which run to the end of the input.
type CallFrame struct {
	Name, ID, Meta, ProtocolVersion, Plugin []byte
	Arguments                               []byte
}

// frameFields is the count of length-prefixed fields before the arguments.
const frameFields = 5

// Size is the length of f on the wire.
func (f *CallFrame) Size() int {
	return frameFields*4 + len(f.Name) + len(f.ID) + len(f.Meta) + len(f.ProtocolVersion) + len(f.Plugin) + len(f.Arguments)
}

// AppendCallFrame appends f's wire form to dst. A field longer than 4 GiB
// cannot be framed; the host's input limit is far below that.
func AppendCallFrame(dst []byte, f *CallFrame) []byte {
	for _, field := range [frameFields][]byte{f.Name, f.ID, f.Meta, f.ProtocolVersion, f.Plugin} {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(min(len(field), math.MaxUint32)))
		dst = append(dst, field...)
	}
	return append(dst, f.Arguments...)
}

// ParseCallFrame splits b, a frame's wire form, into f's fields, each a
// slice of b (nothing is copied). It reports false when a length runs
// past the end of b.
func ParseCallFrame(b []byte, f *CallFrame) bool {
	for _, field := range [frameFields]*[]byte{&f.Name, &f.ID, &f.Meta, &f.ProtocolVersion, &f.Plugin} {
		if len(b) < 4 {
			return false
		}
		n := binary.LittleEndian.Uint32(b)
		b = b[4:]
		if uint64(n) > uint64(len(b)) {
			return false
		}
		*field, b = b[:n:n], b[n:]
	}
	f.Arguments = b
	return true
}
