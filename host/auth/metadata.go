package auth

import "encoding/json"

// Metadata returns the RFC 9728 protected resource metadata document:
// the resource, the issuers as authorization_servers, the policy's scopes
// and bearer tokens in the Authorization header only.
func (v *Validator) Metadata() []byte {
	doc := struct {
		Resource               string   `json:"resource"`
		AuthorizationServers   []string `json:"authorization_servers"`
		ScopesSupported        []string `json:"scopes_supported,omitempty"`
		BearerMethodsSupported []string `json:"bearer_methods_supported"`
		ResourceName           string   `json:"resource_name,omitempty"`
	}{
		Resource:               v.resource,
		AuthorizationServers:   v.order,
		ScopesSupported:        v.policy.Scopes(),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "mcphost",
	}
	b, _ := json.Marshal(doc) // strings only: cannot fail
	return b
}
