package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sandbox"
)

// A plugin that reaches for a host its allowed_hosts does not allow, and
// that its may_request_hosts names, or uses a directory its
// may_request_paths mounts, is not refused at once: the sandbox
// asks consent (the [sandbox.Consent] of every module a Loader with
// Grants loads), which
//
//  1. allows what a standing grant (plugins.grants.toml) given to this
//     plugin's code (its sha256; a grant given to other code under the
//     same name is asked again, and the log says so) or an allow_once
//     answer earlier in the same call allows;
//  2. otherwise asks the person behind the client, with one elicitation
//     through the call's Peer (the host turns it into elicitation/create,
//     or an input_required round in the stateless era): the message names
//     the plugin and host:port (or the directory, and read or write), and
//     the requested schema has one property,
//     decision, one of allow_once, allow_always and deny;
//  3. allow_once allows the rest of this call; allow_always also stores a
//     grant (when the grants file cannot be written, it allows this call
//     only, and the tool call's result says so to the person, after the
//     plugin's content); anything else (deny, decline, cancel, an error, no answer
//     before the call's deadline, a client that cannot be asked) refuses,
//     with a reason that names the key to edit.
//
// Nothing an agent can call reaches Grants.Grant: only an answer the client
// returns to the host's own question does.

// Decisions a person can give.
const (
	DecisionAllowOnce   = "allow_once"
	DecisionAllowAlways = "allow_always"
	DecisionDeny        = "deny"
)

// consent is the sandbox.Consent of one plugin's code.
type consent struct {
	grants *Grants
	log    *slog.Logger
	code   Code // what grants are given to
}

// forCode returns c for the plugin running code.
func (c *consent) forCode(code Code) *consent {
	cc := *c
	cc.code = code
	return &cc
}

// onceKey carries the targets allowed once during one module call (a
// moduleCall answers it).
type onceKey struct{}

type onceSet struct {
	mu      sync.Mutex
	targets map[string]bool
}

func (s *onceSet) has(target string) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.targets[target]
}

func (s *onceSet) add(target string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.targets == nil {
		s.targets = map[string]bool{}
	}
	s.targets[target] = true
}

// ConsentParams returns the elicitation that asks a person whether plugin
// may connect to target ("host:port"). Its input key (for the stateless
// era) begins with abi.ConsentInputKeyPrefix, which no guest may use.
func ConsentParams(plugin, target string) json.RawMessage {
	return consentParams(plugin, askingFor(sandbox.Reach{Plugin: plugin, Host: target}), GrantsFileName)
}

// asking is what one reach asks a person for, in words.
type asking struct {
	target string // host:port or directory, as grants name it
	once   string // its key among the call's allow_once answers
	want   string // "connect to api.example.com:443"
	key    string // the plugins.toml key that would allow it
	log    []any  // its log attributes
}

func askingFor(r sandbox.Reach) asking {
	if r.Path == "" {
		t := r.Host
		if r.Port != 0 {
			t = r.Target()
		}
		return asking{target: t, once: t, want: "connect to " + t, key: "allowed_hosts", log: []any{"plugin", r.Plugin, "host", t}}
	}
	a := asking{target: r.Path, once: "read:" + r.Path, want: "read files in " + r.Path, key: "allowed_paths",
		log: []any{"plugin", r.Plugin, "path", r.Path, "access", AccessRead}}
	if r.Write {
		a.once, a.want, a.log[5] = "write:"+r.Path, "read and write files in "+r.Path, AccessWrite
	}
	return a
}

// consentParams is the question; kept names where allow_always is kept
// (the grants file, or the shared store).
func consentParams(plugin string, a asking, kept string) json.RawMessage {
	msg := fmt.Sprintf("Plugin %q wants to %s, which its %s does not allow. "+
		"allow_once: for this call only. allow_always: from now on (kept in %s; 'mcphost grants revoke %s %s' removes it). deny: refuse.",
		plugin, a.want, a.key, kept, plugin, a.target)
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"decision": map[string]any{
				"type":        "string",
				"title":       "Decision",
				"description": fmt.Sprintf("May plugin %q %s?", plugin, a.want),
				"enum":        []string{DecisionAllowOnce, DecisionAllowAlways, DecisionDeny},
			},
		},
		"required": []string{"decision"},
	}
	s, _ := json.Marshal(schema)
	meta, _ := json.Marshal(map[string]string{abi.MetaInputKey: abi.ConsentInputKeyPrefix + plugin + ":" + a.once})
	b, _ := json.Marshal(abi.ElicitParams{Message: msg, RequestedSchema: s, Meta: meta})
	return b
}

// Allow implements sandbox.Consent, for a host and for a path alike.
func (c *consent) Allow(ctx context.Context, r sandbox.Reach) error {
	a := askingFor(r)
	once, _ := ctx.Value(onceKey{}).(*onceSet)
	if once.has(a.once) || r.Path != "" && !r.Write && once.has("write:"+r.Path) {
		return nil
	}
	if c.grants != nil {
		ok, err := c.grants.HasContext(ctx, r, c.code)
		if ok {
			return nil
		}
		if err != nil {
			c.log.Error("consent: the grants could not be read; no standing grant applies, so the person is asked", append(a.log, "err", err)...)
		}
	}
	if c.grants != nil {
		if gr, ok := c.grants.Other(r, c.code); ok {
			attrs := append(a.log, "granted_code", gr.Code, "code", c.code.Digest, "file", c.grants.File())
			if gr.Code == "" {
				c.log.Warn("consent: the grant was written before grants named the code they were given to; the person is asked again", attrs...)
			} else {
				c.log.Warn("consent: the grant was given to other code under this plugin's name; the person is asked again", attrs...)
			}
		}
	}
	what := "host " + a.target + " is not in allowed_hosts"
	if r.Path != "" {
		what = "path " + a.target + " is not in allowed_paths"
	}
	edit := fmt.Sprintf("add %q to %s in [[plugin]] %s", a.target, a.key, r.Plugin)
	peer := sandbox.PeerFrom(ctx)
	if peer == nil {
		return fmt.Errorf("%s and no client is attached to ask a person; %s", what, edit)
	}
	kept := GrantsFileName
	if c.grants != nil && c.grants.Shared() {
		kept = "the server's shared store"
	}
	res, err := peer.Request(ctx, "elicitation/create", consentParams(r.Plugin, a, kept))
	switch {
	case err != nil && ctx.Err() != nil:
		c.log.Warn("consent: no answer before the call ended; refused", append(a.log, "err", err)...)
		return fmt.Errorf("%s and no one answered before the call ended; %s", what, edit)
	case err != nil:
		// Also the stateless era's first round: the question goes out
		// as input_required and the call runs again with the answer.
		c.log.Info("consent: the client was not asked, or not answered yet; refused for now", append(a.log, "err", err)...)
		return fmt.Errorf("%s and a person could not be asked (%v); %s", what, err, edit)
	}
	decision, err := parseDecision(res)
	if err != nil {
		c.log.Warn("consent: refused", append(a.log, "answer", err)...)
		return fmt.Errorf("%s and the person %v; %s", what, err, edit)
	}
	switch decision {
	case DecisionAllowOnce:
		once.add(a.once)
		c.log.Info("consent: allowed once", a.log...)
		return nil
	case DecisionAllowAlways:
		once.add(a.once)
		if c.grants == nil {
			c.log.Warn("consent: allowed, but there is no grants file to keep it in; allowed once", a.log...)
			addNote(ctx, notKept(r.Plugin, a, "there is no grants file to keep it in", edit))
			return nil
		}
		if err := c.grants.Grant(ctx, r, c.code, time.Now()); err != nil {
			c.log.Error("consent: allowed, but the grant was not saved; allowed once", append(a.log, "err", err)...)
			fix := "make its directory writable, or " + edit
			if c.grants.Shared() {
				fix = "answer again once the store answers (mcphost reconnects by itself), or " + edit
			}
			addNote(ctx, notKept(r.Plugin, a, fmt.Sprintf("%s could not be written: %v", c.grants.File(), err), fix))
			return nil
		}
		c.log.Info("consent: granted for good", append(a.log, "file", c.grants.File(), "code", c.code.Digest)...)
		return nil
	}
	c.log.Info("consent: denied", a.log...)
	return fmt.Errorf("%s and a person denied it; %s", what, edit)
}

// notKept tells the person that their allow_always answer was not kept.
func notKept(plugin string, a asking, why, fix string) string {
	return fmt.Sprintf("mcphost: your answer %s (plugin %q may %s) could not be kept: %s. "+
		"It was allowed for this call only, and you will be asked again. To keep it, %s.",
		DecisionAllowAlways, plugin, a.want, why, fix)
}

// notesKey carries what a call's result must tell the person beyond what
// the plugin returned (a toolCall answers it).
type notesKey struct{}

type notes struct {
	mu   sync.Mutex
	list []string
}

// addNote adds a note to the result of the call of ctx, if it has a place
// for them (tool calls do); the caller logs it either way.
func addNote(ctx context.Context, note string) {
	n, _ := ctx.Value(notesKey{}).(*notes)
	if n == nil {
		return
	}
	n.mu.Lock()
	n.list = append(n.list, note)
	n.mu.Unlock()
}

// appendTo returns the tool result out with one text content more per
// note, after the plugin's own.
func (n *notes) appendTo(out json.RawMessage) (json.RawMessage, error) {
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

// parseDecision reads the client's answer to ConsentParams: the decision
// of an accepted form, or an error saying what the person did instead.
func parseDecision(res json.RawMessage) (string, error) {
	var r abi.ElicitResult
	if err := json.Unmarshal(res, &r); err != nil {
		return "", errors.New("answered with something that is not an elicitation result")
	}
	if r.Action != "accept" {
		return "", fmt.Errorf("answered %q", r.Action)
	}
	var c struct {
		Decision string `json:"decision"`
	}
	if err := json.Unmarshal(r.Content, &c); err != nil {
		return "", errors.New("accepted without a decision")
	}
	switch c.Decision {
	case DecisionAllowOnce, DecisionAllowAlways, DecisionDeny:
		return c.Decision, nil
	}
	return "", fmt.Errorf("answered decision %q", c.Decision)
}
