package plugins

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/mcphost/mcphost/abi/jsonscan"
	"github.com/mcphost/mcphost/plugins/config"
)

// ValidationError says why a tool's arguments or structured output do not
// match its schema.
type ValidationError struct {
	Tool   string // exposed tool name
	What   string // "arguments" or "structuredContent"
	Detail string // one line; each failed check is "at '<pointer>': <cause>"
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("tool %q: invalid %s: %s", e.Tool, e.What, e.Detail)
}

// noRemote refuses every $ref outside the schema itself: a plugin's schema
// must not make the host read files or fetch URLs.
type noRemote struct{}

func (noRemote) Load(u string) (any, error) {
	return nil, fmt.Errorf("external $ref %q is not allowed", u)
}

// compileSchema compiles one tool schema (Draft 2020-12 unless it says
// otherwise in $schema). The schema must be an object whose "type" is
// "object", as MCP requires of both inputSchema and outputSchema.
func compileSchema(plugin, tool, which string, raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := decodeJSON(raw)
	if err != nil {
		return nil, &shapeError{fmt.Errorf("%s: %w", which, err)}
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, &shapeError{fmt.Errorf("%s: want a JSON object, got %s", which, jsonscan.Kind(doc))}
	}
	if obj["type"] != "object" {
		return nil, &shapeError{fmt.Errorf(`%s: want "type": "object"`, which)}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noRemote{})
	loc := "urn:mcphost:" + url.PathEscape(plugin) + ":" + url.PathEscape(tool) + ":" + which
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("%s: %s", which, flatten(err, nil))
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", which, flatten(err, nil))
	}
	return s, nil
}

// shapeError says a schema is not even an object schema. Unlike a schema
// that does not compile, such a tool is never listed: MCP clients check
// this shape (the TypeScript SDK's ToolSchema wants "type": "object") and
// reject the whole tools/list over one tool that lacks it.
type shapeError struct{ err error }

func (e *shapeError) Error() string { return e.err.Error() }
func (e *shapeError) Unwrap() error { return e.err }

// decodeJSON decodes one JSON value, keeping numbers exact (json.Number),
// and rejects trailing data.
func decodeJSON(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid JSON: data after the value")
	}
	return v, nil
}

// flatten turns jsonschema's indented, multi-line errors into one line:
// the leaf causes joined with "; ". schema (the tool's, or nil) lets a
// property the schema does not allow name the declared one it is closest
// to, as config keys, flags and tool names do.
func flatten(err error, schema json.RawMessage) string {
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		var leaves []string
		collectLeaves(ve, &leaves, schema)
		if len(leaves) > 0 {
			return strings.Join(leaves, "; ")
		}
	}
	return strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", " ")), " ")
}

func collectLeaves(ve *jsonschema.ValidationError, out *[]string, schema json.RawMessage) {
	if len(ve.Causes) == 0 {
		s := strings.Join(strings.Fields(ve.Error()), " ") // a leaf prints as "at '<ptr>': <message>"
		if k, ok := ve.ErrorKind.(*kind.AdditionalProperties); ok {
			if at := strings.LastIndex(s, ": additional propert"); at >= 0 {
				s = s[:at] + ": " + additionalProperties(k.Properties, propertiesAt(schema, ve.InstanceLocation))
			}
		}
		*out = append(*out, s)
		return
	}
	for _, c := range ve.Causes {
		collectLeaves(c, out, schema)
	}
}

// additionalProperties says which of props are not allowed, with the
// declared property each most likely meant: `additional property "nme"
// not allowed (did you mean "name"?)`.
func additionalProperties(props, known []string) string {
	quoted := make([]string, len(props))
	var meant []string
	for i, p := range props {
		quoted[i] = strconv.Quote(p)
		if m := config.Suggest(p, known); m != "" {
			meant = append(meant, strconv.Quote(m)+" for "+quoted[i])
		}
	}
	msg := "additional property " + quoted[0] + " not allowed"
	if len(props) > 1 {
		msg = "additional properties " + strings.Join(quoted, ", ") + " not allowed"
	}
	switch {
	case len(meant) == 1 && len(props) == 1:
		msg += " (did you mean " + strconv.Quote(config.Suggest(props[0], known)) + "?)"
	case len(meant) > 0:
		msg += " (did you mean " + strings.Join(meant, ", ") + "?)"
	}
	return msg
}

// propertiesAt returns the property names schema declares for the
// instance at loc, following properties and items (what a $ref or a
// combinator declares is not looked for: no suggestion then).
func propertiesAt(schema json.RawMessage, loc []string) []string {
	var node map[string]any
	if len(schema) == 0 || json.Unmarshal(schema, &node) != nil {
		return nil
	}
	for _, step := range loc {
		next, _ := node["properties"].(map[string]any)[step].(map[string]any)
		if next == nil {
			next, _ = node["items"].(map[string]any)
		}
		if next == nil {
			return nil
		}
		node = next
	}
	props, _ := node["properties"].(map[string]any)
	return slices.Sorted(maps.Keys(props))
}

// validateArguments checks args against the tool's inputSchema. Absent or
// null arguments are checked as {}.
func (t *Tool) validateArguments(args json.RawMessage) error {
	if t.in == nil {
		return nil
	}
	var v any // the arguments decoded; {} when absent or null
	if trimmed := bytes.TrimSpace(args); len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
		if t.flat != nil && t.flat.valid(trimmed) {
			return nil
		}
		var err error
		if v, err = jsonscan.Decode(trimmed); err != nil {
			// One pass decodes and validates; encoding/json says what is
			// wrong.
			if _, err = decodeJSON(trimmed); err == nil {
				err = errors.New("invalid JSON")
			}
			return &ValidationError{Tool: t.Name, What: "arguments", Detail: err.Error()}
		}
	}
	if v == nil {
		v = map[string]any{}
	}
	if err := t.in.Validate(v); err != nil {
		return &ValidationError{Tool: t.Name, What: "arguments", Detail: flatten(err, t.Def.InputSchema)}
	}
	return nil
}

// validateStructured checks a result's structuredContent against the
// tool's outputSchema. It returns nil when the tool has no outputSchema,
// and an error when it has one but v is absent.
func (t *Tool) validateStructured(v json.RawMessage) error {
	if t.out == nil {
		return nil
	}
	trimmed := bytes.TrimSpace(v)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return &ValidationError{Tool: t.Name, What: "structuredContent",
			Detail: "missing: the tool declares an outputSchema"}
	}
	if t.outFlat != nil && t.outFlat.valid(trimmed) {
		return nil
	}
	doc, err := jsonscan.Decode(trimmed)
	if err != nil {
		if _, err = decodeJSON(trimmed); err == nil { // its message
			err = errors.New("invalid JSON")
		}
		return &ValidationError{Tool: t.Name, What: "structuredContent", Detail: err.Error()}
	}
	if err := t.out.Validate(doc); err != nil {
		return &ValidationError{Tool: t.Name, What: "structuredContent", Detail: flatten(err, t.Def.OutputSchema)}
	}
	return nil
}
