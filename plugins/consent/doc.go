// Package consent decides what a plugin may reach beyond what its
// configuration allows, by asking the person behind the client.
//
// A plugin that reaches for a host its allowed_hosts does not allow, and
// that its may_request_hosts names, or uses a directory its
// may_request_paths mounts, is not refused at once: the sandbox asks its
// Limits.Consent, a [Decider] (package plugins gives one, [Decider.For]
// the plugin's code, to every module a Loader with Grants loads), which
//
//  1. allows what a standing grant (plugins.grants.toml, or the shared
//     store) given to this plugin's code (its sha256; a grant given to
//     other code under the same name is asked again, and the log says so)
//     or an allow_once answer earlier in the same call ([Once])
//     allows;
//  2. otherwise asks the person behind the client, with one elicitation
//     through the call's Peer (the host turns it into elicitation/create,
//     or an input_required round in the stateless era): the message names
//     the plugin and host:port (or the directory, and read or write), and
//     the requested schema has one property, decision, one of allow_once,
//     allow_always and deny ([Params]; its input key passes [IsKey]);
//  3. allow_once allows the rest of this call; allow_always also stores a
//     grant (when the grants cannot be written, it allows this call only,
//     and the tool call's result says so to the person, after the
//     plugin's content: [WithNotes]); anything else (deny, decline,
//     cancel, an error, no answer before the call's deadline, a client
//     that cannot be asked) refuses, with a reason that names the key to
//     edit.
//
// It owns:
//   - the decision above ([Decider], consent.go);
//   - asking a person: the question, its input key, reading the answer,
//     and the notes a call's result carries to the person (ask.go,
//     notes.go);
//   - the grants: [Grants] in plugins.grants.toml beside plugins.toml
//     ([OpenGrants]) or in the shared store ([StoreGrants]), each
//     recording the code (sha256 and signer) the person approved
//     (grants.go).
//
// Nothing an agent can call reaches Grants.Grant: only an answer the
// client returns to the host's own question does; `mcphost grants revoke`
// is the only other writer.
//
// It ignores:
//   - where a reach is caught: the sandbox's egress and gated mounts find
//     the reach ([sandbox.Reach]) and ask; its Consent interface is the
//     sandbox's, as interfaces belong to their users;
//   - keeping guests out of the reserved input key: the sandbox refuses a
//     guest's request that holds one (abi.HoldsConsentKey), and the host
//     takes an answer to one only from a round that asked it;
//   - JSON-RPC: the question is MCP elicitation params, which the host
//     carries like a plugin's own elicitation;
//   - what plugins.toml allows outright (allowed_hosts, allowed_paths),
//     which package config reads and the sandbox enforces.
package consent
