package abi

import (
	"encoding/json"
)

// The MCP wire types that cross the host↔guest boundary (protocol
// 2025-11-25). Schemas, _meta and other open-ended members stay
// json.RawMessage so that they pass through byte for byte.

// Icon is a display icon (2025-11-25).
type Icon struct {
	Src      string   `json:"src"`
	MimeType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

// ToolAnnotations are untrusted hints about a tool's behaviour.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// Tool describes one tool.
type Tool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	Icons        []Icon           `json:"icons,omitempty"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	Execution    *ToolExecution   `json:"execution,omitempty"`
	Meta         json.RawMessage  `json:"_meta,omitempty"`
}

// ToolExecution says how a tool may be run. A tool with TaskSupport
// TaskOptional or TaskRequired is run as a task (the
// io.modelcontextprotocol/tasks extension) for clients that declare the
// extension: the call returns a task handle at once and the client polls
// for the result.
type ToolExecution struct {
	TaskSupport string `json:"taskSupport,omitempty"`
}

// Values of ToolExecution.TaskSupport.
const (
	TaskForbidden = "forbidden" // always answered in the request (the default)
	TaskOptional  = "optional"  // a task for clients that declare the extension
	TaskRequired  = "required"  // only as a task: other clients get -32021
)

// ListToolsResult is the output of list_tools (and of v1 describe).
type ListToolsResult struct {
	Tools []Tool `json:"tools"`
}

// CallToolParams is the request of call_tool.
type CallToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Meta      json.RawMessage `json:"_meta,omitempty"`
}

// CallToolResult is the output of call_tool.
type CallToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	Meta              json.RawMessage `json:"_meta,omitempty"`
}

// Annotations qualify content and resources.
type Annotations struct {
	Audience     []string `json:"audience,omitempty"`
	Priority     *float64 `json:"priority,omitempty"`
	LastModified string   `json:"lastModified,omitempty"`
}

// Content types.
const (
	ContentText         = "text"
	ContentImage        = "image"
	ContentAudio        = "audio"
	ContentResourceLink = "resource_link"
	ContentResource     = "resource"
)

// Content is one content block: text, image, audio, resource_link or an
// embedded resource, told apart by Type. Only the members of its type are
// encoded.
type Content struct {
	Type string
	// text
	Text string
	// image, audio (base64 Data); also resource_link's MimeType
	Data     string
	MimeType string
	// resource_link
	URI         string
	Name        string
	Title       string
	Description string
	Size        *int64
	// resource
	Resource *ResourceContents

	Annotations *Annotations
	Meta        json.RawMessage
}

type wireContent struct {
	Type        string            `json:"type"`
	Text        *string           `json:"text,omitempty"`
	Data        string            `json:"data,omitempty"`
	MimeType    string            `json:"mimeType,omitempty"`
	URI         string            `json:"uri,omitempty"`
	Name        string            `json:"name,omitempty"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	Size        *int64            `json:"size,omitempty"`
	Resource    *ResourceContents `json:"resource,omitempty"`
	Annotations *Annotations      `json:"annotations,omitempty"`
	Meta        json.RawMessage   `json:"_meta,omitempty"`
}

// MarshalJSON encodes only the members that belong to c.Type.
func (c Content) MarshalJSON() ([]byte, error) {
	w := wireContent{Type: c.Type, Annotations: c.Annotations, Meta: c.Meta}
	switch c.Type {
	case ContentText:
		w.Text = &c.Text
	case ContentImage, ContentAudio:
		w.Data, w.MimeType = c.Data, c.MimeType
	case ContentResourceLink:
		w.URI, w.Name, w.Title, w.Description, w.MimeType, w.Size = c.URI, c.Name, c.Title, c.Description, c.MimeType, c.Size
	case ContentResource:
		w.Resource = c.Resource
	default:
		// Unknown types keep every member that is set.
		if c.Text != "" {
			w.Text = &c.Text
		}
		w.Data, w.MimeType, w.URI, w.Name, w.Title, w.Description, w.Size, w.Resource =
			c.Data, c.MimeType, c.URI, c.Name, c.Title, c.Description, c.Size, c.Resource
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes any content block.
func (c *Content) UnmarshalJSON(b []byte) error {
	var w wireContent
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*c = Content{Type: w.Type, Data: w.Data, MimeType: w.MimeType, URI: w.URI, Name: w.Name,
		Title: w.Title, Description: w.Description, Size: w.Size, Resource: w.Resource,
		Annotations: w.Annotations, Meta: w.Meta}
	if w.Text != nil {
		c.Text = *w.Text
	}
	return nil
}

// TextContent returns a text block.
func TextContent(s string) Content { return Content{Type: ContentText, Text: s} }

// ResourceContents is one item of a resource read: text or base64 blob.
type ResourceContents struct {
	URI      string
	MimeType string
	Text     string
	Blob     string // base64; when set, Text is ignored
	Meta     json.RawMessage
}

type wireResourceContents struct {
	URI      string          `json:"uri"`
	MimeType string          `json:"mimeType,omitempty"`
	Text     *string         `json:"text,omitempty"`
	Blob     *string         `json:"blob,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// MarshalJSON encodes blob when Blob is set and text otherwise.
func (r ResourceContents) MarshalJSON() ([]byte, error) {
	w := wireResourceContents{URI: r.URI, MimeType: r.MimeType, Meta: r.Meta}
	if r.Blob != "" {
		w.Blob = &r.Blob
	} else {
		w.Text = &r.Text
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes text or blob contents.
func (r *ResourceContents) UnmarshalJSON(b []byte) error {
	var w wireResourceContents
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = ResourceContents{URI: w.URI, MimeType: w.MimeType, Meta: w.Meta}
	if w.Text != nil {
		r.Text = *w.Text
	}
	if w.Blob != nil {
		r.Blob = *w.Blob
	}
	return nil
}

// Resource is one listed resource.
type Resource struct {
	URI         string          `json:"uri"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Size        *int64          `json:"size,omitempty"`
	Icons       []Icon          `json:"icons,omitempty"`
	Annotations *Annotations    `json:"annotations,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// ListResourcesResult is the output of list_resources.
type ListResourcesResult struct {
	Resources []Resource `json:"resources"`
}

// ResourceTemplate is one RFC 6570 URI template.
type ResourceTemplate struct {
	URITemplate string          `json:"uriTemplate"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Icons       []Icon          `json:"icons,omitempty"`
	Annotations *Annotations    `json:"annotations,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// ListResourceTemplatesResult is the output of list_resource_templates.
type ListResourceTemplatesResult struct {
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
}

// ReadResourceParams is the request of read_resource.
type ReadResourceParams struct {
	URI  string          `json:"uri"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ReadResourceResult is the output of read_resource.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
	Meta     json.RawMessage    `json:"_meta,omitempty"`
}

// PromptArgument describes one prompt argument.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Prompt describes one prompt.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Icons       []Icon           `json:"icons,omitempty"`
	Meta        json.RawMessage  `json:"_meta,omitempty"`
}

// ListPromptsResult is the output of list_prompts.
type ListPromptsResult struct {
	Prompts []Prompt `json:"prompts"`
}

// GetPromptParams is the request of get_prompt.
type GetPromptParams struct {
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
	Meta      json.RawMessage   `json:"_meta,omitempty"`
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// GetPromptResult is the output of get_prompt.
type GetPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// CompleteRef names what is being completed. On the MCP wire Type is
// "ref/prompt" or "ref/resource"; hyper-mcp strips the "ref/" prefix before
// calling the guest, and so does mcphost, so guests see "prompt" or
// "resource".
type CompleteRef struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// CompleteArgument is the argument being completed.
type CompleteArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CompleteContext carries already-resolved arguments.
type CompleteContext struct {
	Arguments map[string]string `json:"arguments,omitempty"`
}

// CompleteParams is the request of complete.
type CompleteParams struct {
	Ref      CompleteRef      `json:"ref"`
	Argument CompleteArgument `json:"argument"`
	Context  *CompleteContext `json:"context,omitempty"`
}

// Completion is the body of a CompleteResult.
type Completion struct {
	Values  []string `json:"values"`
	Total   *int     `json:"total,omitempty"`
	HasMore bool     `json:"hasMore,omitempty"`
}

// CompleteResult is the output of complete.
type CompleteResult struct {
	Completion Completion `json:"completion"`
}

// Host-function payloads.

// LoggingMessageParams is the payload of notify_logging_message and of the
// MCP notification notifications/message.
type LoggingMessageParams struct {
	Level  string          `json:"level"`
	Logger string          `json:"logger,omitempty"`
	Data   json.RawMessage `json:"data"`
}

// ProgressParams is the payload of notify_progress. The host fills in the
// progress token of the request being served when the guest leaves it out.
type ProgressParams struct {
	ProgressToken json.RawMessage `json:"progressToken,omitempty"`
	Progress      float64         `json:"progress"`
	Total         *float64        `json:"total,omitempty"`
	Message       string          `json:"message,omitempty"`
}

// SamplingMessage is one message of a sampling request.
type SamplingMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// CreateMessageParams is the payload of create_message (sampling).
type CreateMessageParams struct {
	Messages         []SamplingMessage `json:"messages"`
	MaxTokens        int               `json:"maxTokens"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	Temperature      *float64          `json:"temperature,omitempty"`
	StopSequences    []string          `json:"stopSequences,omitempty"`
	ModelPreferences json.RawMessage   `json:"modelPreferences,omitempty"`
	IncludeContext   string            `json:"includeContext,omitempty"`
	Metadata         json.RawMessage   `json:"metadata,omitempty"`
	// Meta is the request's _meta. Under MetaInputKey it may name the
	// request for a 2026-07-28 client, which answers it by that key.
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// CreateMessageResult is the client's answer to sampling.
type CreateMessageResult struct {
	Role       string  `json:"role"`
	Content    Content `json:"content"`
	Model      string  `json:"model"`
	StopReason string  `json:"stopReason,omitempty"`
}

// ElicitParams is the payload of create_elicitation.
type ElicitParams struct {
	Mode            string          `json:"mode,omitempty"` // "form" (default) or "url"
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	URL             string          `json:"url,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
	// Meta is the request's _meta (see CreateMessageParams.Meta).
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// ResourceNotFound is the message of a guest's error for a URI it does not
// serve (the guest SDK's ErrNotFound): the host answers "resource not
// found" to the client instead of a plugin failure.
const ResourceNotFound = "resource not found"

// MetaInputKey is the _meta key of a sampling or elicitation request that
// names it. A 2026-07-28 client cannot be asked while the call runs: the
// call ends with input_required, listing the request under this name (the
// method's short name and a counter when absent), and runs again once the
// client has answered, when the same request gets the answer.
const MetaInputKey = "io.mcphost/inputKey"

// ElicitResult is the client's answer to elicitation.
type ElicitResult struct {
	Action  string          `json:"action"` // accept, decline, cancel
	Content json.RawMessage `json:"content,omitempty"`
}

// Root is one client root.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// ListRootsResult is the client's answer to roots/list.
type ListRootsResult struct {
	Roots []Root `json:"roots"`
}

// ResourceUpdatedParams is the payload of notify_resource_updated.
type ResourceUpdatedParams struct {
	URI string `json:"uri"`
}

// HostError is what a host function returns to the guest instead of a
// result when it cannot serve the call (for example because the client did
// not declare the capability). It is JSON: {"error":"…"}.
type HostError struct {
	Error string `json:"error"`
}
