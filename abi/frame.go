package abi

import (
	"encoding/binary"
	"math"

	"github.com/mcphost/mcphost/abi/jsonscan"
)

// ExportCallToolFrame is mcphost's second door to call_tool (ABI version
// 2): the same question and the same CallToolResult output, but its input
// is a [CallFrame], the parts of the request the host has already parsed,
// laid out so that the guest finds each by its length instead of scanning
// a JSON envelope. A host calls it instead of call_tool when the guest
// exports it; hyper-mcp and mcp.run plugins never do, and keep call_tool.
const ExportCallToolFrame = "mcphost_call_tool"

// ExportCallToolMembers is mcphost's third door to call_tool (ABI version
// 3): ExportCallToolFrame's question and output, in a frame that also
// indexes the arguments' top-level members ([CallFrame.Members]), so that
// a guest decodes them without scanning them first: the host has already
// checked them, and scans natively many times faster than a guest does.
// A host calls it in preference to the other two.
const ExportCallToolMembers = "mcphost_call_tool_members"

// CallFrame is the input of [ExportCallToolFrame]: the tool's own name,
// the call's context (what [Context] carries, each member as the
// envelope's context would hold it: ID and Meta compact JSON, the two
// strings plain), and the arguments as the client sent them (valid JSON,
// checked by the host), empty when it sent none.
//
// On the wire it is five fields, each a little-endian uint32 length and
// that many bytes, in the order Name, ID, Meta, ProtocolVersion, Plugin,
// and then the arguments, which run to the end of the input. The frame of
// [ExportCallToolMembers] has a sixth field, Members, after Plugin.
type CallFrame struct {
	Name, ID, Meta, ProtocolVersion, Plugin []byte
	// Members, in the frame of ExportCallToolMembers only, indexes the
	// top-level members of Arguments ([AppendArgMembers]); it is empty
	// when they are not an object.
	Members   []byte
	Arguments []byte
}

// frameFields is the count of length-prefixed fields before the arguments
// of ExportCallToolFrame's frame; ExportCallToolMembers's has one more.
const frameFields = 5

// Size is the length of f on the wire in the frame of
// ExportCallToolMembers ([AppendMembersFrame]); the frame of
// ExportCallToolFrame is 4+len(f.Members) bytes shorter.
func (f *CallFrame) Size() int {
	return (frameFields+1)*4 + len(f.Name) + len(f.ID) + len(f.Meta) + len(f.ProtocolVersion) + len(f.Plugin) +
		len(f.Members) + len(f.Arguments)
}

// AppendCallFrame appends f's wire form for ExportCallToolFrame to dst
// (f.Members is not part of it). A field longer than 4 GiB cannot be
// framed; the host's input limit is far below that.
func AppendCallFrame(dst []byte, f *CallFrame) []byte {
	for _, field := range [frameFields][]byte{f.Name, f.ID, f.Meta, f.ProtocolVersion, f.Plugin} {
		dst = appendField(dst, field)
	}
	return append(dst, f.Arguments...)
}

// AppendMembersFrame appends f's wire form for ExportCallToolMembers to
// dst: AppendCallFrame's, with f.Members after f.Plugin.
func AppendMembersFrame(dst []byte, f *CallFrame) []byte {
	for _, field := range [frameFields + 1][]byte{f.Name, f.ID, f.Meta, f.ProtocolVersion, f.Plugin, f.Members} {
		dst = appendField(dst, field)
	}
	return append(dst, f.Arguments...)
}

func appendField(dst, field []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(min(len(field), math.MaxUint32)))
	return append(dst, field...)
}

// ParseCallFrame splits b, a frame's wire form for ExportCallToolFrame,
// into f's fields, each a slice of b (nothing is copied); f.Members is
// set to nil. It reports false when a length runs past the end of b.
func ParseCallFrame(b []byte, f *CallFrame) bool {
	f.Members = nil
	return parseFrame(b, f, []*[]byte{&f.Name, &f.ID, &f.Meta, &f.ProtocolVersion, &f.Plugin})
}

// ParseMembersFrame is ParseCallFrame for ExportCallToolMembers's frame.
// It does not check f.Members: [ArgMembers] does.
func ParseMembersFrame(b []byte, f *CallFrame) bool {
	return parseFrame(b, f, []*[]byte{&f.Name, &f.ID, &f.Meta, &f.ProtocolVersion, &f.Plugin, &f.Members})
}

func parseFrame(b []byte, f *CallFrame, fields []*[]byte) bool {
	for _, field := range fields {
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

// ArgMember is one top-level member of a call's arguments, as
// [CallFrame.Members] indexes it: spans of the arguments, by offset.
type ArgMember struct {
	K0, K1 uint32 // the key's literal, quotes included
	V0, V1 uint32 // the value
	Flags  uint8  // MemberKeyPlain, MemberString, MemberEscaped, MemberHigh
}

// The flags of an ArgMember.
const (
	MemberKeyPlain = 1 << iota // the key has no escape and no byte ≥ 0x80
	MemberString               // the value is a string literal; then:
	MemberEscaped              // it has a backslash escape
	MemberHigh                 // it has a byte ≥ 0x80
)

// memberSize is the length of an ArgMember in an index: four
// little-endian uint32 offsets and the flags.
const memberSize = 17

// ScanArgMembers scans the object whose '{' is s[a0], a call's arguments,
// nested depth levels deep (1 when s is the arguments alone), calling
// member with each top-level member in order, its offsets from a0, and
// returns the object's end. sc's OnString sees every string of the
// object's values.
func ScanArgMembers(sc jsonscan.Scanner, s []byte, a0, depth int, member func(ArgMember)) (int, error) {
	return sc.Object(s, a0, func(k jsonscan.String, v0 int) (int, error) {
		m := ArgMember{K0: uint32(k.Start - a0), K1: uint32(k.End - a0), V0: uint32(v0 - a0)}
		if !k.Escaped && !k.High {
			m.Flags |= MemberKeyPlain
		}
		var v1 int
		if v0 < len(s) && s[v0] == '"' {
			v, err := jsonscan.ScanString(s, v0)
			if err != nil {
				return v0, err
			}
			if sc.OnString != nil {
				sc.OnString(v)
			}
			m.Flags |= MemberString
			if v.Escaped {
				m.Flags |= MemberEscaped
			}
			if v.High {
				m.Flags |= MemberHigh
			}
			v1 = v.End
		} else {
			var err error
			if v1, err = sc.Value(s, v0, depth+1); err != nil {
				return v1, err
			}
		}
		m.V1 = uint32(v1 - a0)
		member(m)
		return v1, nil
	})
}

// AppendArgMembers appends to dst the index of args, a call's arguments
// (valid JSON: the host checked them): a little-endian uint32 count, then
// for each top-level member, in order, its ArgMember as four
// little-endian uint32s (K0, K1, V0, V1) and one byte (Flags). It
// appends nothing when args is not an object, or longer than 4 GiB, or
// not valid after all: a guest then scans args itself.
func AppendArgMembers(dst, args []byte) []byte {
	if len(args) == 0 || args[0] != '{' || len(args) > math.MaxUint32 {
		return dst
	}
	start := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, 0)
	n := uint32(0)
	end, err := ScanArgMembers(jsonscan.Scanner{}, args, 0, 1, func(m ArgMember) {
		dst = binary.LittleEndian.AppendUint32(dst, m.K0)
		dst = binary.LittleEndian.AppendUint32(dst, m.K1)
		dst = binary.LittleEndian.AppendUint32(dst, m.V0)
		dst = binary.LittleEndian.AppendUint32(dst, m.V1)
		dst = append(dst, m.Flags)
		n++
	})
	if err != nil || jsonscan.SkipSpace(args, end) != len(args) {
		return dst[:start]
	}
	binary.LittleEndian.PutUint32(dst[start:], n)
	return dst
}

// ArgMembers appends to dst the members index holds, an index of
// arguments of args bytes, and reports whether it is one: empty (no
// index) or malformed reports false, and so does a member whose spans are
// out of order (each key of two bytes at least, before its value, after
// the member before) or past the arguments' end.
func ArgMembers(dst []ArgMember, index []byte, args int) ([]ArgMember, bool) {
	if len(index) < 4 {
		return dst, false
	}
	n := binary.LittleEndian.Uint32(index)
	if uint64(len(index)-4) != uint64(n)*memberSize {
		return dst, false
	}
	start, last := len(dst), uint32(1) // past the '{'
	for e := index[4:]; len(e) >= memberSize; e = e[memberSize:] {
		m := ArgMember{
			K0: binary.LittleEndian.Uint32(e), K1: binary.LittleEndian.Uint32(e[4:]),
			V0: binary.LittleEndian.Uint32(e[8:]), V1: binary.LittleEndian.Uint32(e[12:]),
			Flags: e[16],
		}
		if m.K0 < last || m.K1 < m.K0 || m.K1-m.K0 < 2 || m.V0 <= m.K1 || m.V1 <= m.V0 || uint64(m.V1) > uint64(args) ||
			m.Flags&MemberString != 0 && m.V1-m.V0 < 2 {
			return dst[:start], false
		}
		last = m.V1
		dst = append(dst, m)
	}
	return dst, true
}
