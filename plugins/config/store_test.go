package config

import (
	"strings"
	"testing"
)

// TestParseConfigStore: [server] store takes a redis:// or rediss:// URL,
// with our topology parameters, and names the key on a bad one.
func TestParseConfigStore(t *testing.T) {
	for _, tt := range []struct {
		value   string
		wantErr string // "" accepts
	}{
		{`"redis://127.0.0.1:6379/0"`, ""},
		{`"rediss://cache.internal:6380/1"`, ""},
		{`"redis://s1:26379?master_name=main&addr=s2:26379"`, ""},
		{`"redis://n1:7000?addr=n2:7000&addr=n3:7000"`, ""},
		{`"http://127.0.0.1:6379"`, `3: server: key "store": want a redis:// or rediss:// URL`},
		{`""`, `3: server: key "store": want a redis:// or rediss:// URL`},
		{`6379`, `3: server: key "store"`},
	} {
		src := "[server]\n\nstore = " + tt.value + "\n"
		cfg, err := ParseConfig("plugins.toml", []byte(src))
		switch {
		case tt.wantErr == "" && err != nil:
			t.Errorf("store = %s: %v", tt.value, err)
		case tt.wantErr == "" && cfg.Server.Store != strings.Trim(tt.value, `"`):
			t.Errorf("store = %s: got %q", tt.value, cfg.Server.Store)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("store = %s: got %v; want an error containing %q", tt.value, err, tt.wantErr)
		}
	}
}
