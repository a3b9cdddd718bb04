package guest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/mcphost/mcphost/abi"
)

// Text returns a text content block.
func Text(s string) abi.Content { return abi.Content{Type: abi.ContentText, Text: s} }

// Image returns an image block holding data, which it base64-encodes.
func Image(data []byte, mimeType string) abi.Content {
	return ImageBase64(base64.StdEncoding.EncodeToString(data), mimeType)
}

// ImageBase64 returns an image block from data that is already base64.
func ImageBase64(b64, mimeType string) abi.Content {
	return abi.Content{Type: abi.ContentImage, Data: b64, MimeType: mimeType}
}

// Audio returns an audio block holding data, which it base64-encodes.
func Audio(data []byte, mimeType string) abi.Content {
	return AudioBase64(base64.StdEncoding.EncodeToString(data), mimeType)
}

// AudioBase64 returns an audio block from data that is already base64.
func AudioBase64(b64, mimeType string) abi.Content {
	return abi.Content{Type: abi.ContentAudio, Data: b64, MimeType: mimeType}
}

// ResourceLink returns a resource_link block pointing at r.
func ResourceLink(r abi.Resource) abi.Content {
	return abi.Content{Type: abi.ContentResourceLink, URI: r.URI, Name: r.Name, Title: r.Title,
		Description: r.Description, MimeType: r.MimeType, Size: r.Size, Annotations: r.Annotations}
}

// EmbeddedText returns an embedded text resource block.
func EmbeddedText(uri, mimeType, text string) abi.Content {
	return abi.Content{Type: abi.ContentResource,
		Resource: &abi.ResourceContents{URI: uri, MimeType: mimeType, Text: text}}
}

// EmbeddedBlob returns an embedded binary resource block; data is
// base64-encoded. An empty blob is sent as empty text, because the wire
// format tells text and blob apart by which one is present.
func EmbeddedBlob(uri, mimeType string, data []byte) abi.Content {
	return abi.Content{Type: abi.ContentResource,
		Resource: &abi.ResourceContents{URI: uri, MimeType: mimeType, Blob: base64.StdEncoding.EncodeToString(data)}}
}

// NewResult returns a successful result holding the given blocks.
func NewResult(content ...abi.Content) *Result {
	if content == nil {
		content = []abi.Content{}
	}
	return &Result{Content: content}
}

// TextResult returns a successful result holding one text block.
func TextResult(s string) *Result { return oneBlock(Text(s)) }

// Error returns a tool result with isError set and msg as its text: a
// failure the model sees and can react to, unlike a protocol error.
func Error(msg string) *Result {
	r := oneBlock(Text(msg))
	r.IsError = true
	return r
}

// TextResult returns a successful result holding one text block, s, as
// the package's TextResult does, but owned by c: it costs no allocation
// and, like c, is valid only until the handler returns; the SDK then
// encodes it and reuses its memory for a later call. A second call
// during the same tool call returns a result of its own. Return it, do
// not keep it: a result kept for later calls is TextResult's.
func (c *Context) TextResult(s string) *Result {
	o := c.owned
	if o == nil || o.taken {
		return TextResult(s)
	}
	o.taken = true
	o.c[0] = Text(s)
	o.r = Result{Content: o.c[:]}
	return &o.r
}

// ownedResult is the memory of a Context's own result
// ([Context.TextResult]): kept from call to call with the Context of the
// frame export, made for each call elsewhere.
type ownedResult struct {
	r     Result
	c     [1]abi.Content
	taken bool // this call's result is handed out
}

// oneBlock returns a result holding c, allocated with its one-block
// content slice: one allocation a call rather than two, which inside
// Wasm is a good part of an echo tool's cost. Appending to its Content
// copies, as with any full slice.
func oneBlock(c abi.Content) *Result {
	b := &struct {
		r Result
		c [1]abi.Content
	}{c: [1]abi.Content{c}}
	b.r.Content = b.c[:]
	return &b.r
}

// Errorf is [Error] with formatting.
func Errorf(format string, args ...any) *Result { return Error(fmt.Sprintf(format, args...)) }

// JSON returns a result whose text block is v encoded as JSON. When v
// encodes to an object it is also the result's structuredContent.
func JSON(v any) (*Result, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	r := TextResult(string(b))
	if t := bytes.TrimSpace(b); len(t) > 0 && t[0] == '{' {
		r.StructuredContent = b
	}
	return r, nil
}

// UserMessage returns a prompt message from the user.
func UserMessage(c abi.Content) abi.PromptMessage { return abi.PromptMessage{Role: "user", Content: c} }

// AssistantMessage returns a prompt message from the assistant.
func AssistantMessage(c abi.Content) abi.PromptMessage {
	return abi.PromptMessage{Role: "assistant", Content: c}
}

// TextResource returns a read result holding one text item.
func TextResource(uri, mimeType, text string) *abi.ReadResourceResult {
	return &abi.ReadResourceResult{Contents: []abi.ResourceContents{{URI: uri, MimeType: mimeType, Text: text}}}
}

// BlobResource returns a read result holding one binary item; data is
// base64-encoded.
func BlobResource(uri, mimeType string, data []byte) *abi.ReadResourceResult {
	return &abi.ReadResourceResult{Contents: []abi.ResourceContents{{URI: uri, MimeType: mimeType,
		Blob: base64.StdEncoding.EncodeToString(data)}}}
}
