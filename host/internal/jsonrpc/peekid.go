package jsonrpc

import "github.com/mcphost/mcphost/abi/jsonscan"

// PeekBytes is how much of an oversize message is kept to look for its id.
// Clients put "id" first or right after "jsonrpc" and "method"; a request
// whose id follows a large params member is answered with a null id, as
// before.
const PeekBytes = 4 << 10

// PeekID returns the raw id of the request that head, the first bytes of
// a message too large to decode, begins; or nil when head is not the start
// of an object whose "id" member (a string or a number) is complete within
// it. Only members before the id are checked, so garbage later in the
// message does not matter: the answer is an error either way.
func PeekID(head []byte) []byte {
	i := jsonscan.SkipSpace(head, 0)
	if i >= len(head) || head[i] != '{' {
		return nil
	}
	i = jsonscan.SkipSpace(head, i+1)
	for i < len(head) && head[i] == '"' {
		k, err := jsonscan.ScanString(head, i)
		if err != nil {
			return nil
		}
		key := head[i+1 : k.End-1]
		i = jsonscan.SkipSpace(head, k.End)
		if i >= len(head) || head[i] != ':' {
			return nil
		}
		v := jsonscan.SkipSpace(head, i+1)
		end, err := jsonscan.ScanValue(head, v, 0)
		if err != nil {
			return nil
		}
		if KeyIs(key, "id") {
			switch c := head[v]; {
			case c == '"':
				return append([]byte(nil), head[v:end]...)
			case (c == '-' || c >= '0' && c <= '9') && end < len(head):
				// A number that ends head might go on ("12" of "123").
				return append([]byte(nil), head[v:end]...)
			}
			return nil
		}
		i = jsonscan.SkipSpace(head, end)
		if i >= len(head) || head[i] != ',' {
			return nil
		}
		i = jsonscan.SkipSpace(head, i+1)
	}
	return nil
}
