package consent

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sandbox"
)

// Asking a person: the question (MCP elicitation params, which the host
// carries like a plugin's own elicitation, or asks as one input of an
// input_required round in the stateless era), its input key, and the
// answer.

// Params returns the elicitation that asks a person whether plugin may
// connect to target ("host:port"). Its input key (for the stateless era)
// is in the space no guest may use ([IsKey]).
func Params(plugin, target string) json.RawMessage {
	return question(plugin, askingFor(sandbox.Reach{Plugin: plugin, Host: target}), GrantsFileName)
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

// question is the elicitation of a; kept names where allow_always is kept
// (the grants file, or the shared store).
func question(plugin string, a asking, kept string) json.RawMessage {
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
				"enum":        []string{AllowOnce, AllowAlways, Deny},
			},
		},
		"required": []string{"decision"},
	}
	s, _ := json.Marshal(schema)
	meta, _ := json.Marshal(map[string]string{abi.MetaInputKey: inputKey(plugin, a.once)})
	b, _ := json.Marshal(abi.ElicitParams{Message: msg, RequestedSchema: s, Meta: meta})
	return b
}

// inputKey is the input key (abi.MetaInputKey) of the question about
// plugin's reach for what ("host:port", "read:/dir" or "write:/dir").
func inputKey(plugin, what string) string {
	return abi.ConsentInputKeyPrefix + plugin + ":" + what
}

// IsKey reports whether key is a consent question's input key: one that
// begins with abi.ConsentInputKeyPrefix. The host takes an answer to such
// a key only from a person's reply to a question it asked, and the
// sandbox refuses a guest's request that holds one (abi.HoldsConsentKey),
// so no plugin can word a question whose answer is taken for consent.
func IsKey(key string) bool { return strings.HasPrefix(key, abi.ConsentInputKeyPrefix) }

// notKept tells the person that their allow_always answer was not kept.
func notKept(plugin string, a asking, why, fix string) string {
	return fmt.Sprintf("mcphost: your answer %s (plugin %q may %s) could not be kept: %s. "+
		"It was allowed for this call only, and you will be asked again. To keep it, %s.",
		AllowAlways, plugin, a.want, why, fix)
}

// parseDecision reads the client's answer to Params: the decision
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
	case AllowOnce, AllowAlways, Deny:
		return c.Decision, nil
	}
	return "", fmt.Errorf("answered decision %q", c.Decision)
}
