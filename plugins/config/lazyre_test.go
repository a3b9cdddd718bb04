package config

import (
	"errors"
	"testing"
)

// TestLazyPatterns checks the patterns compiled at first use (not at init)
// still judge as they did: tool_prefix values and yaml.v3's line prefix.
func TestLazyPatterns(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		want   bool
	}{
		{"", true},
		{"gh", true},
		{"a_b-9", true},
		{"a::", false},
		{"has space", false},
		{"x23456789012345678901234567890123", false}, // 33 characters
		{"x2345678901234567890123456789012", true},   // 32
	} {
		if got := toolPrefixRE().MatchString(tc.prefix); got != tc.want {
			t.Errorf("tool_prefix %q: valid %v; want %v", tc.prefix, got, tc.want)
		}
	}
	var pe *PolicyError
	if err := yamlError("p.yaml", errors.New("yaml: line 7: mapping values are not allowed in this context")); !errors.As(err, &pe) ||
		pe.Line != 7 || pe.Msg != "mapping values are not allowed in this context" {
		t.Errorf("yamlError: got %#v; want line 7 and the message after the prefix", err)
	}
	if toolPrefixRE() != toolPrefixRE() || yamlLine() != yamlLine() {
		t.Error("a lazy pattern was compiled twice")
	}
}
