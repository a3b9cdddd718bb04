package auth

import "testing"

func TestPolicyCheck(t *testing.T) {
	p := NewPolicy([]ScopeRule{
		{Scope: "hash:use", Globs: []string{"hash_*"}},
		{Scope: "admin", Globs: []string{"*_delete", "hash_reset"}},
		{Scope: "files", Globs: []string{"file?"}},
	})
	tests := []struct {
		scopes []string
		name   string
		ok     bool
		need   string
	}{
		{nil, "echo", true, ""},                          // matched by no glob: a valid token is enough
		{nil, "hash_sha256", false, "hash:use"},          // one rule
		{[]string{"hash:use"}, "hash_sha256", true, ""},  // its scope
		{[]string{"admin"}, "hash_reset", true, ""},      // two rules match: either scope unlocks
		{[]string{"hash:use"}, "hash_reset", true, ""},   //
		{nil, "hash_reset", false, "hash:use"},           // the first rule in file order is named
		{[]string{"files"}, "db_delete", false, "admin"}, // other scopes do not help
		{nil, "file1", false, "files"},
		{nil, "file12", true, ""}, // ? is one character
	}
	for _, tc := range tests {
		ok, need := p.Check(tc.scopes, tc.name)
		if ok != tc.ok || need != tc.need {
			t.Errorf("Check(%q, %q) = %v, %q; want %v, %q", tc.scopes, tc.name, ok, need, tc.ok, tc.need)
		}
	}
	if got := p.Scopes(); len(got) != 3 || got[0] != "hash:use" || got[2] != "files" {
		t.Errorf("Scopes() = %q; want the rules' scopes in file order", got)
	}
}
