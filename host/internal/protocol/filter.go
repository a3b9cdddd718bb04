package protocol

import (
	"bytes"
	"strconv"

	"github.com/mcphost/mcphost/abi/jsonscan"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
)

// Version filtering. A client never receives a member its negotiated
// revision does not define (checked against schema/<rev>/schema.json).
// Every filter is type-aware, because the same key means different things
// in different places ("title" is also a JSON Schema keyword, and schemas
// pass through untouched), and every filter returns its input unchanged
// when none of the keys it could drop appear in the bytes, so the common
// case costs one substring scan.
//
// _meta is kept at every revision: it is reserved for metadata in all of
// them, and clients ignore what they do not understand there.
//
// Content blocks a revision does not define are not dropped silently
// (which could leave a result with no content, or a prompt message with
// none): resource_link and audio become text blocks that describe what was
// there, so the model still learns that something was returned.

// keysFor lists, per revision, the quoted keys whose presence forces the
// slow path of a filter.
func keysFor(v Version, after20250618, after20250326, after20251125 []string) [][]byte {
	var ks []string
	if v < V20251125 {
		ks = append(ks, after20251125...)
	}
	if v < V20250618 {
		ks = append(ks, after20250618...)
	}
	if v < V20250326 {
		ks = append(ks, after20250326...)
	}
	out := make([][]byte, len(ks))
	for i, k := range ks {
		out[i] = []byte(strconv.Quote(k))
	}
	return out
}

type filterKeys struct{ tool, item, prompt, result [][]byte }

var filterTable = func() [Latest + 1]filterKeys {
	var t [Latest + 1]filterKeys
	for v := V20241105; v <= Latest; v++ {
		t[v] = filterKeys{
			tool:   keysFor(v, []string{"title", "outputSchema"}, []string{"annotations"}, []string{"icons", "execution"}),
			item:   keysFor(v, []string{"title", "lastModified"}, nil, []string{"icons"}),
			prompt: keysFor(v, []string{"title"}, nil, []string{"icons"}),
			result: keysFor(v, []string{"structuredContent", "lastModified", "resource_link"}, []string{"audio"}, []string{"icons"}),
		}
	}
	return t
}()

func containsAny(b []byte, keys [][]byte) bool {
	for _, k := range keys {
		if bytes.Contains(b, k) {
			return true
		}
	}
	return false
}

func keep(dst, val []byte) ([]byte, bool) { return append(dst, val...), true }

// keepIf keeps the member when ok, and drops it otherwise.
func keepIf(dst, val []byte, ok bool) ([]byte, bool) {
	if !ok {
		return dst, false
	}
	return keep(dst, val)
}

// FilterTool appends a Tool object as the client's revision defines it.
func FilterTool(dst, raw []byte, v Version) []byte {
	if v >= Latest || !containsAny(raw, filterTable[v].tool) {
		return append(dst, raw...)
	}
	return jsonrpc.RewriteObject(dst, raw, func(dst, key, val []byte) ([]byte, bool) {
		switch string(key) {
		case "icons", "execution":
			return keepIf(dst, val, v >= V20251125)
		case "title", "outputSchema":
			return keepIf(dst, val, v >= V20250618)
		case "annotations":
			return keepIf(dst, val, v >= V20250326)
		}
		return keep(dst, val)
	})
}

// FilterItem appends a Resource, ResourceTemplate or ResourceLink-like
// object (icons, title, annotations) for the client's revision.
func FilterItem(dst, raw []byte, v Version) []byte {
	if v >= Latest || !containsAny(raw, filterTable[v].item) {
		return append(dst, raw...)
	}
	return jsonrpc.RewriteObject(dst, raw, func(dst, key, val []byte) ([]byte, bool) {
		switch string(key) {
		case "icons":
			return keepIf(dst, val, v >= V20251125)
		case "title":
			return keepIf(dst, val, v >= V20250618)
		case "annotations":
			return filterAnnotations(dst, val, v), true
		}
		return keep(dst, val)
	})
}

// filterAnnotations drops lastModified (2025-06-18) from an Annotations
// object.
func filterAnnotations(dst, raw []byte, v Version) []byte {
	if v >= V20250618 || !jsonrpc.IsObject(raw) {
		return append(dst, raw...)
	}
	return jsonrpc.RewriteObject(dst, raw, func(dst, key, val []byte) ([]byte, bool) {
		if string(key) == "lastModified" {
			return dst, false
		}
		return keep(dst, val)
	})
}

// FilterPrompt appends a Prompt object for the client's revision.
func FilterPrompt(dst, raw []byte, v Version) []byte {
	if v >= Latest || !containsAny(raw, filterTable[v].prompt) {
		return append(dst, raw...)
	}
	return jsonrpc.RewriteObject(dst, raw, func(dst, key, val []byte) ([]byte, bool) {
		switch string(key) {
		case "icons":
			return keepIf(dst, val, v >= V20251125)
		case "title":
			return keepIf(dst, val, v >= V20250618)
		case "arguments":
			if v < V20250618 && val[0] == '[' {
				return jsonrpc.RewriteArray(dst, val, func(dst, arg []byte) []byte {
					return FilterItem(dst, arg, v)
				}), true
			}
		}
		return keep(dst, val)
	})
}

// FilterCallResult rewrites a CallToolResult for the client's revision:
// structuredContent is dropped before 2025-06-18 (the text content already
// carries the JSON, as the spec asks tools to do) and every content block
// is filtered.
func FilterCallResult(raw []byte, v Version) []byte {
	if v >= Latest || !containsAny(raw, filterTable[v].result) || !jsonrpc.IsObject(raw) {
		return raw
	}
	return jsonrpc.RewriteObject(nil, raw, func(dst, key, val []byte) ([]byte, bool) {
		switch string(key) {
		case "structuredContent":
			return keepIf(dst, val, v >= V20250618)
		case "content":
			return filterContents(dst, val, v), true
		}
		return keep(dst, val)
	})
}

// FilterPromptResult rewrites a GetPromptResult: each message's content
// block is filtered.
func FilterPromptResult(raw []byte, v Version) []byte {
	if v >= Latest || !containsAny(raw, filterTable[v].result) || !jsonrpc.IsObject(raw) {
		return raw
	}
	return jsonrpc.RewriteObject(nil, raw, func(dst, key, val []byte) ([]byte, bool) {
		if string(key) != "messages" || val[0] != '[' {
			return keep(dst, val)
		}
		return jsonrpc.RewriteArray(dst, val, func(dst, m []byte) []byte {
			if !jsonrpc.IsObject(m) {
				return append(dst, m...)
			}
			return jsonrpc.RewriteObject(dst, m, func(dst, key, val []byte) ([]byte, bool) {
				if string(key) == "content" {
					return filterContent(dst, val, v), true
				}
				return keep(dst, val)
			})
		}), true
	})
}

func filterContents(dst, arr []byte, v Version) []byte {
	if arr[0] != '[' {
		return append(dst, arr...)
	}
	return jsonrpc.RewriteArray(dst, arr, func(dst, c []byte) []byte { return filterContent(dst, c, v) })
}

// filterContent appends one content block for the client's revision.
func filterContent(dst, raw []byte, v Version) []byte {
	if !jsonrpc.IsObject(raw) {
		return append(dst, raw...)
	}
	typ, _ := jsonrpc.Unquote(jsonrpc.Member(raw, "type"))
	switch {
	case typ == "resource_link" && v < V20250618:
		return appendTextBlock(dst, describeLink(raw))
	case typ == "audio" && v < V20250326:
		mime, _ := jsonrpc.Unquote(jsonrpc.Member(raw, "mimeType"))
		return appendTextBlock(dst, "[audio content ("+mime+") omitted: protocol version "+v.String()+" cannot carry audio]")
	case typ == "resource_link":
		return FilterItem(dst, raw, v)
	}
	return jsonrpc.RewriteObject(dst, raw, func(dst, key, val []byte) ([]byte, bool) {
		if string(key) == "annotations" {
			return filterAnnotations(dst, val, v), true
		}
		return keep(dst, val)
	})
}

func describeLink(raw []byte) string {
	uri, _ := jsonrpc.Unquote(jsonrpc.Member(raw, "uri"))
	name, _ := jsonrpc.Unquote(jsonrpc.Member(raw, "name"))
	desc, _ := jsonrpc.Unquote(jsonrpc.Member(raw, "description"))
	s := "[resource link] " + uri
	if name != "" {
		s += " (" + name + ")"
	}
	if desc != "" {
		s += ": " + desc
	}
	return s
}

func appendTextBlock(dst []byte, text string) []byte {
	dst = append(dst, `{"type":"text","text":`...)
	dst = jsonscan.AppendString(dst, text)
	return append(dst, '}')
}

// FilterProgress drops the progress message, which 2024-11-05 does not
// define.
func FilterProgress(raw []byte, v Version) []byte {
	if v >= V20250326 || !bytes.Contains(raw, []byte(`"message"`)) {
		return raw
	}
	return jsonrpc.RewriteObject(nil, raw, func(dst, key, val []byte) ([]byte, bool) {
		if string(key) == "message" {
			return dst, false
		}
		return keep(dst, val)
	})
}
