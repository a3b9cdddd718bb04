package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/abi/jsonscan"
)

// A tool call's arguments and output can be megabytes. These helpers let
// each cross plugins with one scan at most: the arguments are spliced
// into the call_tool envelope as they are (encoding/json would compact
// them once for the request and again for the envelope), and the output
// is checked by one validating pass that finds the member it needs
// (json.Unmarshal into a map validates, then decodes and copies).

// callTool is CallTool's v2 call after the checks, for arguments that are
// empty or, when valid is set, known to be valid JSON (Tool.run validated
// them against the tool's schema).
func (p *Plugin) callTool(ctx context.Context, original string, args json.RawMessage, cc abi.Context, valid bool) (json.RawMessage, error) {
	if !valid && len(args) > 0 && !jsonscan.Valid(args) {
		return nil, fmt.Errorf("plugin %q: encode input: arguments are not valid JSON", p.Name)
	}
	in, err := p.callToolInput(original, args, cc)
	if err != nil {
		return nil, err
	}
	return p.call(ctx, abi.ExportCallTool, in, "content", '[')
}

// callToolInput is the v2 call_tool envelope
// {"request":{"name":…,"arguments":…},"context":…}, built by appending.
// args must be valid JSON (the caller checked it) or empty.
func (p *Plugin) callToolInput(name string, args json.RawMessage, cc abi.Context) ([]byte, error) {
	cc.Plugin = p.Name
	cc = fillContext(cc)
	in := make([]byte, 0, len(args)+len(name)+len(cc.ID)+len(cc.Meta)+len(cc.ProtocolVersion)+len(cc.Plugin)+96)
	in = append(in, `{"request":{"name":`...)
	in = jsonscan.AppendString(in, name)
	if len(args) > 0 {
		in = append(in, `,"arguments":`...)
		in = append(in, args...)
	}
	in = append(in, `},"context":`...)
	in, err := appendContext(in, cc)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: encode input: %w", p.Name, err)
	}
	return append(in, '}'), nil
}

// appendContext appends cc as json.Marshal writes it (strings apart:
// HTML characters are not escaped), without its reflection (~1.3 µs a
// call).
func appendContext(b []byte, cc abi.Context) ([]byte, error) {
	b = append(b, '{')
	sep := false
	member := func(key string) {
		if sep {
			b = append(b, ',')
		}
		sep = true
		b = append(b, key...)
	}
	for _, raw := range []struct {
		key string
		v   json.RawMessage
	}{{`"id":`, cc.ID}, {`"_meta":`, cc.Meta}} {
		if len(raw.v) == 0 {
			continue
		}
		member(raw.key)
		var err error
		if b, err = appendCompact(b, raw.v); err != nil {
			return nil, err
		}
	}
	if cc.ProtocolVersion != "" {
		member(`"protocolVersion":`)
		b = jsonscan.AppendString(b, cc.ProtocolVersion)
	}
	if cc.Plugin != "" {
		member(`"plugin":`)
		b = jsonscan.AppendString(b, cc.Plugin)
	}
	return append(b, '}'), nil
}

// appendCompact appends raw JSON as json.Marshal writes a RawMessage:
// checked, compacted and HTML-escaped. Raw JSON without space or any byte
// it would escape is only checked; other JSON goes through encoding/json.
func appendCompact(b, raw []byte) ([]byte, error) {
	if !needsMarshal(raw) {
		if !jsonscan.Valid(raw) {
			return nil, fmt.Errorf("invalid JSON %.40q", raw)
		}
		return append(b, raw...), nil
	}
	q, err := json.Marshal(json.RawMessage(raw))
	if err != nil {
		return nil, err
	}
	return append(b, q...), nil
}

// needsMarshal reports whether raw has a byte json.Marshal would change:
// space, an HTML character, or the lead byte of U+2028 and U+2029.
func needsMarshal(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n', '<', '>', '&', 0xe2:
			return true
		}
	}
	return false
}

// topMember returns the raw value of the last member named key of the
// JSON object out (encoding/json's choice among duplicates), whether it
// is present, and whether out is a valid object at all; one pass.
func topMember(out []byte, key string) (val []byte, found, isObject bool) {
	isObject = jsonscan.Members(out, func(k jsonscan.String, raw []byte) {
		lit := out[k.Start:k.End]
		if len(lit) == len(key)+2 && string(lit[1:len(lit)-1]) == key ||
			k.Escaped && jsonscan.Unquote(lit, k) == key {
			val, found = raw, true
		}
	})
	return val, found, isObject
}

// isNull reports whether raw is the JSON literal null (space around it
// allowed).
func isNull(raw []byte) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }
