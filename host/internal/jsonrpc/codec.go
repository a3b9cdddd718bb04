package jsonrpc

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"

	"github.com/mcphost/mcphost/abi/jsonscan"
)

// The codec turns bytes into messages and messages into bytes. It does no
// I/O and keeps every id exactly as the client sent it.

// Kind is what a decoded message is, judged by its members.
type Kind uint8

// The kinds of message. A message that fails to decode still has the kind
// it looked like, so that a malformed notification is not answered.
const (
	KindInvalid      Kind = iota // neither method nor result/error with an id
	KindRequest                  // method and id
	KindNotification             // method, no id
	KindResponse                 // id and result or error, no method
)

// Message is one decoded JSON-RPC message. Its slices alias the input.
type Message struct {
	Kind   Kind
	ID     json.RawMessage // as sent; nil when absent or unusable
	Method []byte          // decoded method name; nil when absent
	Params json.RawMessage // nil when absent or null
	Result json.RawMessage
	Error  json.RawMessage
	// ServerID is the raw string value of a top-level "server_id" member,
	// an extension of the envelope that mcphost's gateway routes on; it is
	// captured here so that routing costs no second scan.
	ServerID json.RawMessage
	// ParamMembers are the members of Params when it is an object, in
	// the order sent, read in the same pass as the message: handlers look
	// members up here ([Members.Get]) instead of walking Params (and a
	// tool's arguments inside it) once per lookup.
	ParamMembers Members
}

// Members are an object's members, in the order sent: offsets into the
// message they were read from. The first four are held in the value
// itself, so that a request's (name, arguments, _meta and one more) cost
// no allocation of their own.
type Members struct {
	src   []byte
	n     int
	first [4]member
	rest  []member
}

// member is one member of an object: src[key:keyEnd] is its key as sent
// (between the quotes, escapes not decoded), src[val:valEnd] its value.
type member struct{ key, keyEnd, val, valEnd int32 }

// maxMembersSrc is the largest message whose offsets a member can hold.
const maxMembersSrc = math.MaxInt32

// reset forgets every member (params repeated: only the last counts).
func (ms *Members) reset() {
	ms.n = 0
	ms.rest = ms.rest[:0]
}

// add appends the member whose key and value are src[key:keyEnd] and
// src[val:valEnd]; len(src) is at most maxMembersSrc.
func (ms *Members) add(src []byte, key, keyEnd, val, valEnd int) {
	ms.src = src
	m := member{int32(key), int32(keyEnd), int32(val), int32(valEnd)}
	if ms.n < len(ms.first) {
		ms.first[ms.n] = m
	} else {
		ms.rest = append(ms.rest, m)
	}
	ms.n++
}

// Len is the number of members.
func (ms *Members) Len() int { return ms.n }

// At returns the key (as sent, between the quotes, escapes not decoded)
// and the value of member i.
func (ms *Members) At(i int) (key, val []byte) {
	m := ms.first[min(i, len(ms.first)-1)]
	if i >= len(ms.first) {
		m = ms.rest[i-len(ms.first)]
	}
	return ms.src[m.key:m.keyEnd], ms.src[m.val:m.valEnd]
}

// Get returns the value of the member named name (the last one when the
// object repeats it, as encoding/json does), or nil.
func (ms *Members) Get(name string) []byte {
	for i := ms.n - 1; i >= 0; i-- {
		if key, val := ms.At(i); KeyIs(key, name) {
			return val
		}
	}
	return nil
}

// Decode reads one JSON-RPC message (not a batch). On failure it returns a
// typed error: -32700 when b is not JSON, -32600 when it is JSON but not a
// valid message. msg.Kind then says what the message looked like, so that
// a malformed notification or response is not answered, and msg.ID holds
// the id if it could be read.
func Decode(b []byte) (msg Message, err *Error) {
	i := jsonscan.SkipSpace(b, 0)
	if len(b) > maxMembersSrc {
		return msg, Errorf(CodeInvalidRequest, "invalid request: over 2 GiB")
	}
	if i >= len(b) || b[i] != '{' {
		if jsonscan.Valid(b) {
			return msg, Errorf(CodeInvalidRequest, "invalid request: not a JSON-RPC message object")
		}
		return msg, Errorf(CodeParseError, "parse error: not valid JSON")
	}
	var version, method, id []byte
	// params is walked member by member as part of this pass, so that
	// its members are known without a second scan.
	end, werr := walkObject(b, i, 1, &msg.ParamMembers, nil, func(key, val []byte) bool {
		name, _ := keyName(key) // a bad escape names no member
		switch string(name) {
		case "jsonrpc":
			version = val
		case "id":
			id = val
		case "method":
			method = val
		case "params":
			msg.Params = val
		case "result":
			msg.Result = val
		case "error":
			msg.Error = val
		case "server_id":
			msg.ServerID = val
		}
		return true
	})
	if werr != nil || jsonscan.SkipSpace(b, end) != len(b) {
		return Message{}, Errorf(CodeParseError, "parse error: not valid JSON")
	}
	return msg, msg.classify(version, method, id)
}

// classify validates the envelope members and sets kind, id and method.
func (msg *Message) classify(version, method, id []byte) *Error {
	validID := id != nil && (id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9')
	if validID {
		msg.ID = id
	}
	if method != nil {
		msg.Kind = KindNotification
		if id != nil {
			msg.Kind = KindRequest
		}
	} else if id != nil && (msg.Result != nil || msg.Error != nil) {
		msg.Kind = KindResponse
	}
	if string(version) != `"2.0"` {
		return Errorf(CodeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if id != nil && !validID {
		return Errorf(CodeInvalidRequest, "invalid request: id must be a string or a number")
	}
	if method == nil {
		if msg.Kind == KindResponse && (msg.Result == nil) == (msg.Error == nil) {
			return Errorf(CodeInvalidRequest, "invalid response: needs exactly one of result and error")
		}
		if msg.Kind != KindResponse {
			return Errorf(CodeInvalidRequest, `invalid request: missing "method"`)
		}
		return nil
	}
	if method[0] != '"' {
		return Errorf(CodeInvalidRequest, `invalid request: "method" must be a string`)
	}
	msg.Method = method[1 : len(method)-1] // alias the input unless escaped
	if bytes.IndexByte(msg.Method, '\\') >= 0 {
		name, _ := Unquote(method)
		msg.Method = []byte(name)
	}
	if p := msg.Params; p == nil || p[0] != '{' {
		msg.ParamMembers.reset() // params repeated: an object, then not
	}
	if p := msg.Params; p != nil {
		if string(p) == "null" {
			msg.Params = nil
		} else if p[0] != '{' && p[0] != '[' {
			return Errorf(CodeInvalidRequest, `invalid request: "params" must be an object`)
		}
	}
	if msg.ServerID != nil && msg.ServerID[0] != '"' {
		return Errorf(CodeInvalidRequest, `invalid request: "server_id" must be a string`)
	}
	return nil
}

// SplitBatch returns the elements of a JSON array. An array that is not
// valid JSON is -32700; an empty one is -32600.
func SplitBatch(b []byte) ([][]byte, *Error) {
	if !jsonscan.Valid(b) {
		return nil, Errorf(CodeParseError, "parse error: not valid JSON")
	}
	var elems [][]byte
	EachElement(b, func(v []byte) bool {
		elems = append(elems, v)
		return true
	})
	if len(elems) == 0 {
		return nil, Errorf(CodeInvalidRequest, "invalid request: empty batch")
	}
	return elems, nil
}

// IsBatch reports whether b holds a JSON array.
func IsBatch(b []byte) bool {
	i := jsonscan.SkipSpace(b, 0)
	return i < len(b) && b[i] == '['
}

var (
	nullID     = []byte("null")
	emptyJSON  = json.RawMessage("{}")
	jsonrpcHdr = []byte(`{"jsonrpc":"2.0"`)
)

// AppendResponse appends a result response to id; result must be JSON.
func AppendResponse(dst []byte, id, result []byte) []byte {
	dst = append(dst, jsonrpcHdr...)
	dst = append(dst, `,"id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendError encodes an error response; a nil id is sent as null.
func AppendError(dst []byte, id []byte, e *Error) []byte {
	if id == nil {
		id = nullID
	}
	dst = append(dst, jsonrpcHdr...)
	dst = append(dst, `,"id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = jsonscan.AppendString(dst, e.Message)
	if e.Data != nil {
		if data, err := json.Marshal(e.Data); err == nil {
			dst = append(dst, `,"data":`...)
			dst = append(dst, data...)
		}
	}
	return append(dst, '}', '}')
}

// AppendNotification appends a notification; params, when not nil, must be
// a JSON object.
func AppendNotification(dst []byte, method string, params []byte) []byte {
	return appendCall(dst, nil, method, params)
}

// AppendRequest appends a request with id; params, when not nil, must be a
// JSON object.
func AppendRequest(dst []byte, id []byte, method string, params []byte) []byte {
	return appendCall(dst, id, method, params)
}

// appendCall appends a request, or a notification when id is nil.
func appendCall(dst []byte, id []byte, method string, params []byte) []byte {
	dst = append(dst, jsonrpcHdr...)
	if id != nil {
		dst = append(dst, `,"id":`...)
		dst = append(dst, id...)
	}
	dst = append(dst, `,"method":`...)
	dst = jsonscan.AppendString(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// MarshalResult encodes a handler's result (nil becomes {}). json.RawMessage results (the
// plugins' JSON) are used as they are, without reflection.
func MarshalResult(v any) ([]byte, error) {
	switch r := v.(type) {
	case nil:
		return emptyJSON, nil
	case json.RawMessage:
		return r, nil
	default:
		return json.Marshal(r)
	}
}

// TrimEOL removes one trailing "\n" or "\r\n".
func TrimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}
