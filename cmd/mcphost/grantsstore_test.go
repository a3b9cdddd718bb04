package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/redistest"
	"github.com/mcphost/mcphost/plugins/consent"
	"github.com/mcphost/mcphost/plugins/store"
	"github.com/mcphost/mcphost/sandbox"
)

// TestGrantsCommandStore: `mcphost grants` lists and revokes the grants
// of a store, named by --store or by MCPHOST_STORE, and a revoke stands
// for a replica holding the store at its next check.
func TestGrantsCommandStore(t *testing.T) {
	srv := redistest.Start(t)
	st, err := store.Open(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	replica := consent.StoreGrants(st, srv.URL())
	code := consent.Code{Digest: "sha256:" + strings.Repeat("cd", 32)}
	r := sandbox.Reach{Plugin: "fetch", Host: "api.example", Port: 443}
	if err := replica.Grant(t.Context(), r, code, time.Now()); err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir()) // no plugins.toml here
	var out, errOut bytes.Buffer
	if err := cmdGrants(t.Context(), []string{"list", "--store", srv.URL()}, &out, &errOut); err != nil {
		t.Fatalf("list: %v (%s)", err, errOut.String())
	}
	if !strings.Contains(out.String(), "api.example:443") || !strings.Contains(out.String(), "sha256:cdcdcdcdcdcd") {
		t.Errorf("list printed %q; want the grant and its code", out.String())
	}
	// From the config's [server] store.
	if err := os.WriteFile("plugins.toml", []byte(fmt.Sprintf("[server]\nstore = %q\n", srv.URL())), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := cmdGrants(t.Context(), []string{"list"}, &out, &errOut); err != nil || !strings.Contains(out.String(), "api.example:443") {
		t.Errorf("list with [server] store: %q, %v; want the grant", out.String(), err)
	}
	if err := os.Remove("plugins.toml"); err != nil {
		t.Fatal(err)
	}
	t.Setenv(store.EnvURL, srv.URL())
	out.Reset()
	if err := cmdGrants(t.Context(), []string{"revoke", "fetch", "api.example:443"}, &out, &errOut); err != nil {
		t.Fatalf("revoke: %v (%s)", err, errOut.String())
	}
	if !strings.Contains(out.String(), "revoked: fetch may no longer connect to api.example:443") {
		t.Errorf("revoke printed %q", out.String())
	}
	if ok, err := replica.HasContext(t.Context(), r, code); ok || err != nil {
		t.Errorf("the replica after the revoke: %v, %v; want no grant", ok, err)
	}
	out.Reset()
	if err := cmdGrants(t.Context(), []string{"list"}, &out, &errOut); err != nil || !strings.Contains(out.String(), "no grants in store "+srv.URL()) {
		t.Errorf("list after revoke: %q, %v; want no grants in the store", out.String(), err)
	}
}
