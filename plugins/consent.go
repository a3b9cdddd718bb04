package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sandbox"
)

// A plugin that reaches for a host its allowed_hosts does not allow, and
// that its may_request_hosts names, is not refused at once: the sandbox
// asks consent (the [sandbox.Consent] of every module a Loader with
// Grants loads), which
//
//  1. allows what a standing grant (plugins.grants.toml) or an allow_once
//     answer earlier in the same call allows;
//  2. otherwise asks the person behind the client, with one elicitation
//     through the call's Peer (the host turns it into elicitation/create,
//     or an input_required round in the stateless era): the message names
//     the plugin and host:port, and the requested schema has one property,
//     decision, one of allow_once, allow_always and deny;
//  3. allow_once allows the rest of this call; allow_always also stores a
//     grant; anything else (deny, decline, cancel, an error, no answer
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

// consent is the Loader's sandbox.Consent.
type consent struct {
	grants *Grants
	log    *slog.Logger
}

// onceKey carries the targets allowed once during one module call.
type onceKey struct{}

type onceSet struct {
	mu      sync.Mutex
	targets map[string]bool
}

// withOnce gives a module call its own set of allow_once answers.
func withOnce(ctx context.Context) context.Context {
	return context.WithValue(ctx, onceKey{}, &onceSet{})
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
	msg := fmt.Sprintf("Plugin %q wants to connect to %s, which its allowed_hosts does not allow. "+
		"allow_once: for this call only. allow_always: from now on (kept in %s; 'mcphost grants revoke %s %s' removes it). deny: refuse.",
		plugin, target, GrantsFileName, plugin, target)
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"decision": map[string]any{
				"type":        "string",
				"title":       "Decision",
				"description": fmt.Sprintf("May plugin %q connect to %s?", plugin, target),
				"enum":        []string{DecisionAllowOnce, DecisionAllowAlways, DecisionDeny},
			},
		},
		"required": []string{"decision"},
	}
	s, _ := json.Marshal(schema)
	meta, _ := json.Marshal(map[string]string{abi.MetaInputKey: abi.ConsentInputKeyPrefix + plugin + ":" + target})
	b, _ := json.Marshal(abi.ElicitParams{Message: msg, RequestedSchema: s, Meta: meta})
	return b
}

// Allow implements sandbox.Consent.
func (c *consent) Allow(ctx context.Context, r sandbox.Reach) error {
	target := r.Target()
	once, _ := ctx.Value(onceKey{}).(*onceSet)
	if c.grants != nil && c.grants.Has(r.Plugin, target) || once.has(target) {
		return nil
	}
	edit := fmt.Sprintf("add %q to allowed_hosts in [[plugin]] %s", target, r.Plugin)
	peer := sandbox.PeerFrom(ctx)
	if peer == nil {
		return fmt.Errorf("host %s is not in allowed_hosts and no client is attached to ask a person; %s", target, edit)
	}
	res, err := peer.Request(ctx, "elicitation/create", ConsentParams(r.Plugin, target))
	switch {
	case err != nil && ctx.Err() != nil:
		c.log.Warn("consent: no answer before the call ended; refused", "plugin", r.Plugin, "host", target, "err", err)
		return fmt.Errorf("host %s is not in allowed_hosts and no one answered before the call ended; %s", target, edit)
	case err != nil:
		// Also the stateless era's first round: the question goes out
		// as input_required and the call runs again with the answer.
		c.log.Info("consent: the client was not asked, or not answered yet; refused for now", "plugin", r.Plugin, "host", target, "err", err)
		return fmt.Errorf("host %s is not in allowed_hosts and a person could not be asked (%v); %s", target, err, edit)
	}
	decision, err := parseDecision(res)
	if err != nil {
		c.log.Warn("consent: refused", "plugin", r.Plugin, "host", target, "answer", err)
		return fmt.Errorf("host %s is not in allowed_hosts and the person %v; %s", target, err, edit)
	}
	switch decision {
	case DecisionAllowOnce:
		once.add(target)
		c.log.Info("consent: allowed once", "plugin", r.Plugin, "host", target)
		return nil
	case DecisionAllowAlways:
		once.add(target)
		if c.grants == nil {
			c.log.Warn("consent: allowed, but there is no grants file to keep it in; allowed once", "plugin", r.Plugin, "host", target)
			return nil
		}
		if err := c.grants.Grant(r.Plugin, target, time.Now()); err != nil {
			c.log.Error("consent: allowed, but the grant was not saved; allowed once", "plugin", r.Plugin, "host", target, "err", err)
			return nil
		}
		c.log.Info("consent: granted for good", "plugin", r.Plugin, "host", target, "file", c.grants.File())
		return nil
	}
	c.log.Info("consent: denied", "plugin", r.Plugin, "host", target)
	return fmt.Errorf("host %s is not in allowed_hosts and a person denied it; %s", target, edit)
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
