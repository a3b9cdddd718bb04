package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/store"
)

// TestServeHTTP starts `mcphost serve --http 127.0.0.1:0`, reads the
// address from the listening line as scripts do, initializes a session
// and stops the server as SIGTERM would (its context ends).
func TestServeHTTP(t *testing.T) {
	t.Setenv("MCPHOST_TEST_TOKEN", "tok")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errR, errW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- cmdServe(ctx, []string{"--http", "127.0.0.1:0", "--http-path", "/rpc", "--auth-token-env", "MCPHOST_TEST_TOKEN", "--no-watch"},
			strings.NewReader(""), io.Discard, errW)
		errW.Close()
	}()
	addr := systest.ListeningAddr(errR, "/rpc")
	var url string
	select {
	case url = <-addr:
	case err := <-done:
		t.Fatalf("serve returned %v before listening", err)
	case <-time.After(20 * time.Second):
		t.Fatal("no listening line on stderr")
	}
	hc := &http.Client{} // not http.DefaultClient, which the sandbox adjusts once
	defer hc.CloseIdleConnections()
	post := func(auth string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	if resp := post(""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: got %d; want 401", resp.StatusCode)
	}
	if resp := post("Bearer tok"); resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
		t.Errorf("initialize: got %d, session %q; want 200 and a session", resp.StatusCode, resp.Header.Get("Mcp-Session-Id"))
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: got %v; want nil after the context ended", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not return after the context ended")
	}
}

func TestServeHTTPFlagErrors(t *testing.T) {
	withAuth := filepath.Join(t.TempDir(), "plugins.toml")
	os.WriteFile(withAuth, []byte("[auth]\nresource = \"https://m.example/mcp\"\nissuers = [\"https://idp.example\"]\n"), 0o644)
	t.Setenv("MCPHOST_TEST_TOKEN_SET", "x")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--http", "127.0.0.1:0", "--auth-token-env", "MCPHOST_SURELY_UNSET_VAR"}, "unset or empty"},
		{[]string{"--http", "127.0.0.1:0", "--http-path", "sse"}, "--http-path"},
		{[]string{"--http", "127.0.0.1:x:y"}, "--http"},
		{[]string{"--config", withAuth, "--http", "127.0.0.1:0", "--auth-token-env", "MCPHOST_TEST_TOKEN_SET"}, "--auth-token-env and [auth] (line 1) both set"},
	} {
		err := cmdServe(context.Background(), tc.args, strings.NewReader(""), io.Discard, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v; want an error mentioning %q", tc.args, err, tc.want)
		}
	}
}

// TestServeHTTPStateKeyWarning: serve --http without a request-state key
// warns at start that retries cannot cross replicas, naming the variable
// to set, where a balancer is plausible (a store, trusted proxies); on
// loopback with neither, or with a key, it does not.
func TestServeHTTPStateKeyWarning(t *testing.T) {
	const warning = `level=WARN msg="no request state key: this process signs 2026-07-28 requestState with a random key of its own, ` +
		`so a retry after input_required that reaches another replica fails its integrity check; ` +
		`behind a balancer, set the same secret in MCPHOST_REQUEST_STATE_KEY on every replica" env=MCPHOST_REQUEST_STATE_KEY balancer=`
	dir := t.TempDir()
	conf := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := conf("plain.toml", "[server]\n")
	proxies := conf("proxies.toml", "[server]\ntrusted_proxies = [\"10.0.0.0/8\"]\n")
	withStore := conf("store.toml", "[server]\nstore = \"redis://127.0.0.1:1\"\n") // never answers: logged, not fatal
	for _, tc := range []struct {
		name, config, key string
		warn              bool
	}{
		{"loopback", plain, "", false},
		{"trusted proxies", proxies, "", true},
		{"store", withStore, "", true},
		{"store with key", withStore, "a-shared-secret", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("MCPHOST_REQUEST_STATE_KEY", tc.key)
			t.Setenv(store.EnvURL, "")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errR, errW := io.Pipe()
			done := make(chan error, 1)
			go func() {
				done <- cmdServe(ctx, []string{"--config", tc.config, "--http", "127.0.0.1:0", "--no-watch"}, strings.NewReader(""), io.Discard, errW)
				errW.Close()
			}()
			warned := false
			sc := bufio.NewScanner(errR)
			for sc.Scan() && !strings.Contains(sc.Text(), "msg=listening") {
				warned = warned || strings.Contains(sc.Text(), warning)
			}
			cancel()
			go io.Copy(io.Discard, errR)
			if err := <-done; err != nil {
				t.Fatalf("serve: %v", err)
			}
			if warned != tc.warn {
				t.Errorf("warned %v before the listening line; want %v", warned, tc.warn)
			}
		})
	}
}

// TestBalancerHint: only a listener beyond loopback, a store or trusted
// proxies make a balancer plausible. The store is the one serve resolved
// (storeURL), never the environment read again.
func TestBalancerHint(t *testing.T) {
	t.Setenv(store.EnvURL, "redis://127.0.0.1:1/") // read once by serve, not here
	proxied := config.DefaultConfig()
	proxied.Server.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	for _, tc := range []struct {
		cfg         *config.Config
		store, addr string
		want        bool
	}{
		{config.DefaultConfig(), "", "127.0.0.1:8080", false}, {config.DefaultConfig(), "", "[::1]:8080", false},
		{config.DefaultConfig(), "", "localhost:8080", false},
		{config.DefaultConfig(), "", ":8080", true}, {config.DefaultConfig(), "", "0.0.0.0:8080", true},
		{config.DefaultConfig(), "", "192.0.2.7:8080", true}, {config.DefaultConfig(), "", "[::]:8080", true},
		{config.DefaultConfig(), "redis://127.0.0.1:6379/", "127.0.0.1:8080", true},
		{proxied, "", "127.0.0.1:8080", true},
	} {
		if got := balancerHint(tc.cfg, tc.store, tc.addr) != ""; got != tc.want {
			t.Errorf("balancerHint(store %q, %q) says a balancer is plausible: %v; want %v", tc.store, tc.addr, got, tc.want)
		}
	}
}

// TestAuthConfig parses an [auth] table setting every key and checks that
// authConfig hands all of it, in file order, to the validator: a field left
// zero in auth.Config means a key the conversion dropped.
func TestAuthConfig(t *testing.T) {
	cfg, err := config.ParseConfig("plugins.toml", []byte(`[auth]
resource = "https://m.example/mcp"
issuers = ["https://idp.example", "https://idp2.example"]
jwks_url = "https://idp.example/jwks"
introspection_url = "https://idp.example/introspect"
client_id_env = "MCPHOST_ID"
client_secret_env = "MCPHOST_SECRET"
[auth.scopes]
"echo:use" = ["test_echo", "echo_*"]
"admin" = ["*"]
`))
	if err != nil {
		t.Fatal(err)
	}
	got := authConfig(cfg.Auth)
	want := auth.Config{
		Resource:         "https://m.example/mcp",
		Issuers:          []string{"https://idp.example", "https://idp2.example"},
		Scopes:           []auth.ScopeRule{{Scope: "echo:use", Globs: []string{"test_echo", "echo_*"}}, {Scope: "admin", Globs: []string{"*"}}},
		JWKSURL:          "https://idp.example/jwks",
		IntrospectionURL: "https://idp.example/introspect",
		ClientIDEnv:      "MCPHOST_ID",
		ClientSecretEnv:  "MCPHOST_SECRET",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("authConfig = %+v; want %+v", got, want)
	}
	w := reflect.ValueOf(want)
	for i := range w.NumField() {
		if w.Field(i).IsZero() {
			t.Errorf("auth.Config.%s is not set by this test; add its key to the table above", w.Type().Field(i).Name)
		}
	}
}
