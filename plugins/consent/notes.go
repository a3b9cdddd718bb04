package consent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/mcphost/mcphost/abi"
)

// notesKey carries what a call's result must tell the person beyond what
// the plugin returned.
type notesKey struct{}

// Notes are what a call's result must tell the person beyond what the
// plugin returned. It is safe for concurrent use.
type Notes struct {
	mu   sync.Mutex
	list []string
}

// WithNotes gives a call a place for notes to the person (what consent
// must tell them beyond what the plugin returned, such as an allow_always
// answer that could not be kept), which the caller adds to its result
// with [Notes.AppendTo].
func WithNotes(ctx context.Context) (context.Context, *Notes) {
	n := &Notes{}
	return context.WithValue(ctx, notesKey{}, n), n
}

// addNote adds a note to the result of the call of ctx, if it has a place
// for them (tool calls do); the caller logs it either way.
func addNote(ctx context.Context, note string) {
	n, _ := ctx.Value(notesKey{}).(*Notes)
	if n == nil {
		return
	}
	n.mu.Lock()
	n.list = append(n.list, note)
	n.mu.Unlock()
}

// AppendTo returns the tool result out with one text content more per
// note, after the plugin's own.
func (n *Notes) AppendTo(out json.RawMessage) (json.RawMessage, error) {
	n.mu.Lock()
	list := slices.Clone(n.list)
	n.mu.Unlock()
	if len(list) == 0 {
		return out, nil
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("add a note to the result: %w", err)
	}
	var content []json.RawMessage
	if c, ok := res["content"]; ok && string(c) != "null" {
		if err := json.Unmarshal(c, &content); err != nil {
			return nil, fmt.Errorf("add a note to the result: content: %w", err)
		}
	}
	for _, note := range list {
		b, err := json.Marshal(abi.TextContent(note))
		if err != nil {
			return nil, fmt.Errorf("add a note to the result: %w", err)
		}
		content = append(content, b)
	}
	c, err := json.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("add a note to the result: %w", err)
	}
	res["content"] = c
	return json.Marshal(res)
}
