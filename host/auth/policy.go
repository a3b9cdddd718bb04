package auth

import (
	"path"
	"slices"
)

// ScopeRule is one scope and the globs (as in path.Match) of the tool,
// prompt and resource-template names it unlocks (an [auth.scopes] entry).
type ScopeRule struct {
	Scope string
	Globs []string
}

// Policy maps scopes to the tool, prompt and resource-template names they
// unlock. A name that no rule's glob matches needs no scope: a valid token
// is enough. A name that several rules match is unlocked by any of their
// scopes.
type Policy struct {
	rules []ScopeRule // in file order
}

// NewPolicy returns the policy of rules (globs as in path.Match; config
// has checked them).
func NewPolicy(rules []ScopeRule) *Policy {
	return &Policy{rules: rules}
}

// Scopes returns every scope the policy names, in file order
// (scopes_supported).
func (p *Policy) Scopes() []string {
	if p == nil {
		return nil
	}
	out := make([]string, 0, len(p.rules))
	for _, r := range p.rules {
		out = append(out, r.Scope)
	}
	return out
}

// Check reports whether a token holding scopes may use name, and when it
// may not, the scope to ask for: the first rule, in file order, whose
// globs match name.
func (p *Policy) Check(scopes []string, name string) (ok bool, need string) {
	if p == nil {
		return true, ""
	}
	for _, r := range p.rules {
		if !matchAny(r.Globs, name) {
			continue
		}
		if slices.Contains(scopes, r.Scope) {
			return true, ""
		}
		if need == "" {
			need = r.Scope
		}
	}
	return need == "", need
}

func matchAny(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}
