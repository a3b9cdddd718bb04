package host

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// The codec turns bytes into messages and messages into bytes. It does no
// I/O and keeps every id exactly as the client sent it.

type msgKind uint8

const (
	kindInvalid msgKind = iota
	kindRequest
	kindNotification
	kindResponse
)

// message is one decoded JSON-RPC message. Its slices alias the input.
type message struct {
	kind     msgKind
	id       json.RawMessage // nil when absent or unusable
	method   []byte          // decoded method name; nil when absent
	params   json.RawMessage // nil when absent or null
	result   json.RawMessage
	error    json.RawMessage
	serverID json.RawMessage // raw string value of the top-level "server_id"
}

// decode reads one JSON-RPC message (not a batch). On failure it returns a
// typed error: -32700 when b is not JSON, -32600 when it is JSON but not a
// valid message. msg.kind then says what the message looked like, so that
// a malformed notification or response is not answered, and msg.id holds
// the id if it could be read.
func decode(b []byte) (msg message, err *rpcError) {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		if validJSON(b) {
			return msg, errorf(codeInvalidRequest, "invalid request: not a JSON-RPC message object")
		}
		return msg, errorf(codeParseError, "parse error: not valid JSON")
	}
	var version, method, id []byte
	end := walkObject(b, i, func(key, val []byte) bool {
		switch {
		case keyIs(key, "jsonrpc"):
			version = val
		case keyIs(key, "id"):
			id = val
		case keyIs(key, "method"):
			method = val
		case keyIs(key, "params"):
			msg.params = val
		case keyIs(key, "result"):
			msg.result = val
		case keyIs(key, "error"):
			msg.error = val
		case keyIs(key, "server_id"):
			msg.serverID = val
		}
		return true
	})
	if end < 0 || skipWS(b, end) != len(b) {
		return message{}, errorf(codeParseError, "parse error: not valid JSON")
	}
	return msg, msg.classify(version, method, id)
}

// classify validates the envelope members and sets kind, id and method.
func (msg *message) classify(version, method, id []byte) *rpcError {
	validID := id != nil && (id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9')
	if validID {
		msg.id = id
	}
	if method != nil {
		msg.kind = kindNotification
		if id != nil {
			msg.kind = kindRequest
		}
	} else if id != nil && (msg.result != nil || msg.error != nil) {
		msg.kind = kindResponse
	}
	if string(version) != `"2.0"` {
		return errorf(codeInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if id != nil && !validID {
		return errorf(codeInvalidRequest, "invalid request: id must be a string or a number")
	}
	if method == nil {
		if msg.kind == kindResponse && (msg.result == nil) == (msg.error == nil) {
			return errorf(codeInvalidRequest, "invalid response: needs exactly one of result and error")
		}
		if msg.kind != kindResponse {
			return errorf(codeInvalidRequest, `invalid request: missing "method"`)
		}
		return nil
	}
	if method[0] != '"' {
		return errorf(codeInvalidRequest, `invalid request: "method" must be a string`)
	}
	msg.method = method[1 : len(method)-1] // alias the input unless escaped
	if bytes.IndexByte(msg.method, '\\') >= 0 {
		name, _ := unquote(method)
		msg.method = []byte(name)
	}
	if p := msg.params; p != nil {
		if string(p) == "null" {
			msg.params = nil
		} else if p[0] != '{' && p[0] != '[' {
			return errorf(codeInvalidRequest, `invalid request: "params" must be an object`)
		}
	}
	if msg.serverID != nil && msg.serverID[0] != '"' {
		return errorf(codeInvalidRequest, `invalid request: "server_id" must be a string`)
	}
	return nil
}

// splitBatch returns the elements of a JSON array. An array that is not
// valid JSON is -32700; an empty one is -32600.
func splitBatch(b []byte) ([][]byte, *rpcError) {
	if !validJSON(b) {
		return nil, errorf(codeParseError, "parse error: not valid JSON")
	}
	var elems [][]byte
	eachElement(b, func(v []byte) bool {
		elems = append(elems, v)
		return true
	})
	if len(elems) == 0 {
		return nil, errorf(codeInvalidRequest, "invalid request: empty batch")
	}
	return elems, nil
}

// isBatch reports whether b holds a JSON array.
func isBatch(b []byte) bool {
	i := skipWS(b, 0)
	return i < len(b) && b[i] == '['
}

var (
	nullID     = []byte("null")
	emptyJSON  = json.RawMessage("{}")
	jsonrpcHdr = []byte(`{"jsonrpc":"2.0"`)
)

func appendResponse(dst []byte, id, result []byte) []byte {
	dst = append(dst, jsonrpcHdr...)
	dst = append(dst, `,"id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// appendError encodes an error response; a nil id is sent as null.
func appendError(dst []byte, id []byte, e *rpcError) []byte {
	if id == nil {
		id = nullID
	}
	dst = append(dst, jsonrpcHdr...)
	dst = append(dst, `,"id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = appendString(dst, e.Message)
	if e.Data != nil {
		if data, err := json.Marshal(e.Data); err == nil {
			dst = append(dst, `,"data":`...)
			dst = append(dst, data...)
		}
	}
	return append(dst, '}', '}')
}

func appendNotification(dst []byte, method string, params []byte) []byte {
	dst = append(dst, jsonrpcHdr...)
	dst = append(dst, `,"method":`...)
	dst = appendString(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

func appendRequest(dst []byte, id []byte, method string, params []byte) []byte {
	dst = append(dst, jsonrpcHdr...)
	dst = append(dst, `,"id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"method":`...)
	dst = appendString(dst, method)
	if params != nil {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// marshalResult encodes a handler's result. json.RawMessage results (the
// plugins' JSON) are used as they are, without reflection.
func marshalResult(v any) ([]byte, error) {
	switch r := v.(type) {
	case nil:
		return emptyJSON, nil
	case json.RawMessage:
		return r, nil
	default:
		return json.Marshal(r)
	}
}

// trimEOL removes one trailing "\n" or "\r\n".
func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}
