package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
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

// TestCallUsesStore: `mcphost call` keeps a plugin's state in the config's
// [server] store, as serve does: two calls, each with a store and a
// runtime of its own as two processes would have, count 1 then 2 (an
// in-process store would answer 1 twice).
func TestCallUsesStore(t *testing.T) {
	if testing.Short() {
		t.Skip("builds examples/counter")
	}
	srv := redistest.Start(t)
	src, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "examples", "counter"))
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "plugins.toml")
	body := fmt.Sprintf("[server]\nstore = %q\nload_timeout = \"15m\"\n\n[[plugin]]\nname = \"counter\"\nsource = %s\ntimeout = \"60s\"\n", srv.URL(), systest.Quote(src))
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		var out, errOut bytes.Buffer
		if err := cmdCall(t.Context(), []string{"--config", conf, "counter_count", `{"name":"visits"}`}, &out, &errOut); err != nil {
			t.Fatalf("call %d: %v\n%s", i, err, errOut.String())
		}
		if want := fmt.Sprintf(`"text": "%d"`, i); !strings.Contains(out.String(), want) {
			t.Fatalf("call %d printed %s; want %s", i, out.String(), want)
		}
		if i == 1 && !strings.Contains(errOut.String(), "store connected") {
			t.Errorf("call's stderr does not say it connected to the store:\n%s", errOut.String())
		}
	}
}
