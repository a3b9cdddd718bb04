package sandbox

import (
	"context"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// TestKeyringSecret reads secrets through the guest's get_keyring_secret,
// with hyper-mcp's signature, from two modules with different secrets:
// neither can read the other's, and the Peer never hears of it.
func TestKeyringSecret(t *testing.T) {
	t.Parallel()
	a := load(t, Limits{Instances: 1, Secrets: map[string]string{"A_TOKEN": "alpha", "github/token": "gh-a"}})
	b := load(t, Limits{Instances: 1, Secrets: map[string]string{"B_TOKEN": "beta"}})
	tests := []struct {
		name    string
		m       *Module
		payload string
		want    string
	}{
		{"own secret by user", a, `{"service":"mcphost","user":"A_TOKEN"}`, "alpha"},
		{"own secret by service/user", a, `{"service":"github","user":"token"}`, "gh-a"},
		{"other module's secret", a, `{"service":"mcphost","user":"B_TOKEN"}`, ""},
		{"b reads its own", b, `{"service":"x","user":"B_TOKEN"}`, "beta"},
		{"b cannot read a's", b, `{"service":"x","user":"A_TOKEN"}`, ""},
		{"b cannot read a's by service/user", b, `{"service":"github","user":"token"}`, ""},
		{"empty user", a, `{"service":"A_TOKEN","user":""}`, ""},
		{"not JSON", a, ``, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			peer := &fakePeer{}
			in := hostCall(abi.HostKeyringSecret, tc.payload)
			if tc.payload == "" {
				in = []byte(`{"fn":"get_keyring_secret","raw":"not json"}`)
			}
			out, err := tc.m.Call(WithPeer(context.Background(), peer), "host", in)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want {
				t.Errorf("guest got %q; want %q", out, tc.want)
			}
			if n := len(peer.Calls()); n != 0 {
				t.Errorf("peer got %d calls; want none", n)
			}
		})
	}
}
