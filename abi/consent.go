package abi

import (
	"bytes"
	"encoding/json"
	"strings"
)

// ConsentInputKeyPrefix begins the MetaInputKey of the host's own
// requests for a person's consent (a plugin reaching beyond its
// allowed_hosts). A guest's request may not use it: the host refuses
// one that does ([HoldsConsentKey]), so no plugin can word a question
// whose answer the host takes for consent.
const ConsentInputKeyPrefix = "io.mcphost/consent:"

// HoldsConsentKey reports whether a guest's request payload holds a
// string that begins with ConsentInputKeyPrefix. Every string is checked,
// wherever it is, so neither a duplicate _meta key nor an escaped
// spelling slips one past. The host refuses such a request before it
// reaches the client.
func HoldsConsentKey(payload []byte) bool {
	d := json.NewDecoder(bytes.NewReader(payload))
	for {
		tok, err := d.Token()
		if err != nil {
			return false
		}
		if s, ok := tok.(string); ok && strings.HasPrefix(s, ConsentInputKeyPrefix) {
			return true
		}
	}
}
