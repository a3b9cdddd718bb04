package consent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/mcphost/mcphost/internal/redistest"
	"github.com/mcphost/mcphost/plugins/consent"
	"github.com/mcphost/mcphost/plugins/store"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// storeConsentConfig is consentConfig with [server] store = url, in a
// directory of its own (a replica's own copy of the config).
func storeConsentConfig(t *testing.T, url string) string {
	t.Helper()
	conf := consentConfig(t, "10s")
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Replace(string(b), "[server]\n", fmt.Sprintf("[server]\nstore = %q\n", url), 1)
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf
}

// storeGrants returns the grants in the store at url.
func storeGrants(t *testing.T, url string) []consent.Grant {
	t.Helper()
	st, err := store.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	g := consent.StoreGrants(st, url)
	if err := g.ReloadContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	return g.List()
}

// TestConsentStore: two replicas (two mcphost serve processes, each with
// its own config directory) on one Redis, with the Go SDK client in both
// eras. A person answers allow_always once, on replica A; replica B
// honours it without asking, and no plugins.grants.toml is written. With
// Redis stopped the grant cannot be read or kept: the person is asked,
// the call proceeds once, and the result says the answer could not be
// kept, naming the store. Once Redis is back (empty), an allow_always on
// A is kept and honoured by B again, with neither replica restarted.
func TestConsentStore(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the fetch example and runs mcphost serve")
	}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			up := systest.NewUpstream(t)
			target := "127.0.0.1:" + up.Port
			srv := redistest.Start(t)
			confA, confB := storeConsentConfig(t, srv.URL()), storeConsentConfig(t, srv.URL())
			pA, pB := &systest.Person{}, &systest.Person{}
			csA := connectConsent(t, version, "stdio", confA, pA)
			csB := connectConsent(t, version, "stdio", confB, pB)
			fetch := func(step string, cs *mcp.ClientSession, path string) string {
				t.Helper()
				text, isErr := fetchOnce(t, cs, up.URL+path)
				if isErr || !strings.Contains(text, "hello from upstream") {
					t.Fatalf("%s: got %q (isError %v); want the upstream's text", step, text, isErr)
				}
				return text
			}

			pA.Say("allow_always")
			fetch("allow_always on A", csA, "/a")
			fetch("on B", csB, "/b")
			if q := pA.Asked(); len(q) != 1 || !strings.Contains(q[0], target) || !strings.Contains(q[0], "kept in the server's shared store") {
				t.Errorf("A asked %q; want one question about %s that says the answer is kept in the shared store", q, target)
			}
			if q := pB.Asked(); len(q) != 0 {
				t.Errorf("B asked %q; want no question: A's grant stands", q)
			}
			for _, conf := range []string{confA, confB} {
				if _, err := os.Stat(filepath.Join(filepath.Dir(conf), consent.GrantsFileName)); !os.IsNotExist(err) {
					t.Errorf("%s beside %s: %v; want none (grants are in the store)", consent.GrantsFileName, conf, err)
				}
			}
			if list := storeGrants(t, srv.URL()); len(list) != 1 || list[0].Plugin != "fetch" || list[0].Host != target || list[0].Code == "" {
				t.Errorf("the store holds %+v; want fetch → %s for its code", list, target)
			}

			srv.Stop()
			pA.Say("allow_always")
			text := fetch("allow_always with Redis down", csA, "/c")
			if !strings.Contains(text, "could not be kept") || !strings.Contains(text, "store "+srv.URL()) {
				t.Errorf("with Redis down: %q; want the note that the answer could not be kept, naming the store", text)
			}
			if q := pA.Asked(); len(q) != 2 {
				t.Errorf("with Redis down A asked %d questions in all; want 2 (the grant could not be read)", len(q))
			}

			srv.Restart()
			pA.Say("allow_always")
			if text := fetch("allow_always after Redis restarted", csA, "/d"); strings.Contains(text, "could not be kept") {
				t.Errorf("after Redis restarted: %q; want the answer kept", text)
			}
			fetch("on B after Redis restarted", csB, "/e")
			if q := pB.Asked(); len(q) != 0 {
				t.Errorf("B asked %q after Redis restarted; want no question", q)
			}
		})
	}
}

// TestConsentStoreConcurrent: 8 allow_always answers given at once, 4 on
// each of two replicas (mcphost serve processes with their own config
// directories) on one Redis, for 8 different hosts, with the Go SDK
// client: all 8 are kept, and each replica then reaches every host
// without asking.
func TestConsentStoreConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the fetch example and runs mcphost serve")
	}
	srv := redistest.Start(t)
	ups := make([]*systest.Upstream, 8)
	for i := range ups {
		ups[i] = systest.NewUpstream(t)
	}
	people := []*systest.Person{{}, {}}
	sessions := []*mcp.ClientSession{
		connectConsent(t, "2025-11-25", "stdio", storeConsentConfig(t, srv.URL()), people[0]),
		connectConsent(t, "2025-11-25", "stdio", storeConsentConfig(t, srv.URL()), people[1]),
	}
	for _, p := range people {
		p.Say("allow_always", "allow_always", "allow_always", "allow_always")
	}
	errs := make(chan string, len(ups))
	for i, up := range ups {
		go func() {
			res, err := sessions[i%2].CallTool(t.Context(), &mcp.CallToolParams{Name: "fetch_fetch", Arguments: map[string]any{"url": up.URL + "/x"}})
			switch {
			case err != nil:
				errs <- err.Error()
			case res.IsError:
				errs <- fmt.Sprintf("%s: isError", up.URL)
			default:
				errs <- ""
			}
		}()
	}
	for range ups {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
	if n := len(storeGrants(t, srv.URL())); n != len(ups) {
		t.Errorf("%d grants kept of %d; want all", n, len(ups))
	}
	for i, up := range ups { // each on the other replica: no question
		text, isErr := fetchOnce(t, sessions[(i+1)%2], up.URL+"/y")
		if isErr || !strings.Contains(text, "hello from upstream") {
			t.Errorf("%s on the other replica: %q (isError %v)", up.URL, text, isErr)
		}
	}
	for i, p := range people {
		if q := p.Asked(); len(q) != 4 {
			t.Errorf("replica %d asked %d questions; want 4 (one per host, never again)", i, len(q))
		}
	}
}
