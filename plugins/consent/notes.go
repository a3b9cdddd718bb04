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

// IsNotesKey reports whether key is the one a call's [Notes] are asked
// by: a context that carries them itself (rather than through
// [WithNotes]) answers it with its *Notes.
func IsNotesKey(key any) bool { _, ok := key.(notesKey); return ok }

// Notes are what a call's result must tell the person beyond what the
// plugin returned. It is safe for concurrent use.
type Notes struct {
	mu   sync.Mutex
	list []string
}

// NotesFrom returns the notes of the call of ctx: those of a context
// that answers [IsNotesKey] (a tool call's, in plugins), or nil.
func NotesFrom(ctx context.Context) *Notes {
	n, _ := ctx.Value(notesKey{}).(*Notes)
	return n
}

// addNote adds a note to the result of the call of ctx, if it has a place
// for them (tool calls do); the caller logs it either way.
func addNote(ctx context.Context, note string) {
	n := NotesFrom(ctx)
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
