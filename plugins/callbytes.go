package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/jsonscan"
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
	ctx, err := json.Marshal(fillContext(cc))
	if err != nil {
		return nil, fmt.Errorf("plugin %q: encode input: %w", p.Name, err)
	}
	quoted, err := json.Marshal(name)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: encode input: %w", p.Name, err)
	}
	in := make([]byte, 0, len(args)+len(quoted)+len(ctx)+48)
	in = append(in, `{"request":{"name":`...)
	in = append(in, quoted...)
	if len(args) > 0 {
		in = append(in, `,"arguments":`...)
		in = append(in, args...)
	}
	in = append(in, `},"context":`...)
	in = append(in, ctx...)
	return append(in, '}'), nil
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
