package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// listeningAddr sends the URL of the first listening line of a server's
// stderr (r) for path, reading r to its end.
func listeningAddr(r io.Reader, path string) <-chan string {
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`msg=listening addr=(http://127\.0\.0\.1:[0-9]+` + regexp.QuoteMeta(path) + `)`)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	return addr
}

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
	addr := listeningAddr(errR, "/rpc")
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
// to set; with one, it does not.
func TestServeHTTPStateKeyWarning(t *testing.T) {
	const warning = `level=WARN msg="no request state key: this process signs 2026-07-28 requestState with a random key of its own, ` +
		`so a retry after input_required that reaches another replica fails its integrity check; ` +
		`behind a balancer, set the same secret in MCPHOST_REQUEST_STATE_KEY on every replica" env=MCPHOST_REQUEST_STATE_KEY`
	for _, tc := range []struct {
		key  string
		warn bool
	}{{"", true}, {"a-shared-secret", false}} {
		t.Run("key="+tc.key, func(t *testing.T) {
			t.Setenv("MCPHOST_REQUEST_STATE_KEY", tc.key)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errR, errW := io.Pipe()
			done := make(chan error, 1)
			go func() {
				done <- cmdServe(ctx, []string{"--http", "127.0.0.1:0", "--no-watch"}, strings.NewReader(""), io.Discard, errW)
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
