package streamable

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/internal/logtest"
)

// The HTTP transport as an OAuth 2.1 resource server, against a real
// authorization server: internal/tools/testop, an OpenID Provider built on
// zitadel/oidc's op package, run on loopback.

// opClient is one client registered with testop (see its -clients flag).
type opClient struct {
	ID       string        `json:"id"`
	Secret   string        `json:"secret"`
	Audience string        `json:"audience"`
	Opaque   bool          `json:"opaque,omitempty"`
	TTL      time.Duration `json:"ttl,omitempty"`
}

var (
	testopOnce sync.Once
	testopBin  string
	testopErr  error
)

// TestMain removes the testop binary the OAuth tests built.
func TestMain(m *testing.M) {
	code := m.Run()
	if testopBin != "" {
		os.RemoveAll(filepath.Dir(testopBin))
	}
	os.Exit(code)
}

// buildTestOP builds testop once per test binary, in its own module.
func buildTestOP(t *testing.T) string {
	t.Helper()
	testopOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		dir := filepath.Join(filepath.Dir(file), "..", "..", "internal", "tools")
		out, err := os.MkdirTemp("", "testop")
		if err != nil {
			testopErr = err
			return
		}
		testopBin = filepath.Join(out, "testop")
		cmd := exec.Command("go", "build", "-o", testopBin, "./testop")
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			testopErr = &buildError{err, string(b)}
		}
	})
	if testopErr != nil {
		t.Fatalf("building internal/tools/testop: %v", testopErr)
	}
	return testopBin
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + "\n" + e.out }

// testOP is a running testop.
type testOP struct {
	issuer string
	stdin  io.WriteCloser
}

func startOP(t *testing.T, clients ...opClient) *testOP {
	t.Helper()
	bin := buildTestOP(t)
	js, _ := json.Marshal(clients)
	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-clients", string(js), "-exit-with-stdin")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close() // testop exits when stdin closes
		cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	iss, ok := strings.CutPrefix(strings.TrimSpace(line), "issuer ")
	if err != nil || !ok {
		t.Fatalf("testop said %q (%v); want \"issuer URL\"", line, err)
	}
	return &testOP{issuer: iss, stdin: stdin}
}

// TestTestOPServesWithoutStdin: testop started the way a shell starts a
// background job (stdin at end of file) keeps serving until SIGTERM, and
// then exits 0; only -exit-with-stdin ties it to stdin.
func TestTestOPServesWithoutStdin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs an OpenID Provider")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build internal/tools/testop")
	}
	cmd := exec.Command(buildTestOP(t), "-addr", "127.0.0.1:0") // stdin: /dev/null
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	var waitErr error
	exited := make(chan struct{})
	go func() { // after the read: Wait closes stdout
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	iss, ok := strings.CutPrefix(strings.TrimSpace(line), "issuer ")
	if err != nil || !ok {
		t.Fatalf("testop said %q (%v); want \"issuer URL\"", line, err)
	}
	for i := range 3 { // stdin reached its end long before the last one
		resp, err := http.Get(iss + "/.well-known/openid-configuration")
		if err != nil {
			t.Fatalf("request %d after stdin closed: %v", i+1, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: status %d; want 200", i+1, resp.StatusCode)
		}
	}
	select {
	case <-exited:
		t.Fatalf("testop exited on its own (%v); want it to serve until signalled", waitErr)
	default:
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-exited
	if waitErr != nil {
		t.Errorf("testop after SIGTERM: %v; want exit status 0", waitErr)
	}
}

// token gets an access token with the client-credentials grant, asking for
// scopes and, when resource is not "", that audience (RFC 8707).
func (op *testOP) token(t *testing.T, c opClient, resource string, scopes ...string) string {
	t.Helper()
	// By hand rather than with clientcredentials (the Go SDK test below
	// uses that): an expired token's negative expires_in is not valid JSON
	// for golang.org/x/oauth2.
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {strings.Join(scopes, " ")}}
	if resource != "" {
		form.Set("resource", resource)
	}
	req, _ := http.NewRequest(http.MethodPost, op.issuer+"/oauth/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(c.ID, c.Secret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.AccessToken == "" {
		t.Fatalf("token for %s: %s %v", c.ID, resp.Status, err)
	}
	return r.AccessToken
}

// sign has testop sign claims with its current key, header's members
// added to the protected header.
func (op *testOP) sign(t *testing.T, claims, header map[string]any) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"claims": claims, "header": header})
	resp, err := http.Post(op.issuer+"/admin/sign", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	tok, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("testop sign: %s %s", resp.Status, tok)
	}
	return string(tok)
}

func (op *testOP) rotate(t *testing.T) string {
	t.Helper()
	resp, err := http.Post(op.issuer+"/admin/rotate", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct{ Kid string }
	json.NewDecoder(resp.Body).Decode(&r)
	return r.Kid
}

// lockedBuffer is an audit log the test can read while the server writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// authServer is mcphost's HTTP transport with [auth].
type authServer struct {
	url, resource string
	audit         *lockedBuffer
	log           *logtest.Recorder // the server's log
}

// startAuthServer serves the fixture's plugin set (see hosttest) with
// [auth] cfg.
func startAuthServer(t *testing.T, cfg auth.Config, env map[string]string, set string) *authServer {
	t.Helper()
	audit := &lockedBuffer{}
	logger, rec := logtest.New()
	srv := host.New(loadRegistry(t, newFixture(), set), host.Options{Audit: audit, Logger: logger})
	t.Cleanup(srv.Close)
	ts := httptest.NewUnstartedServer(nil)
	base := "http://" + ts.Listener.Addr().String()
	if cfg.Resource == "" {
		cfg.Resource = base + "/mcp"
	}
	ctx, cancel := context.WithCancel(context.Background())
	v, err := auth.New(ctx, cfg, auth.Options{Logger: quietLog, Getenv: func(k string) string { return env[k] }})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	h := NewHandler(srv, Options{Auth: v})
	ts.Config.Handler = h
	ts.Start()
	t.Cleanup(func() {
		h.Close()
		ts.Close()
		v.Close()
		cancel()
	})
	return &authServer{url: base + "/mcp", resource: cfg.Resource, audit: audit, log: rec}
}

// post sends one JSON-RPC request with a bearer token ("" for none) and
// returns the status, WWW-Authenticate and body. Without session, it is a
// 2026-07-28 stateless request, with the mirror headers, from a client
// that declares the tasks extension.
func post(t *testing.T, url, token, method, params string, name string) (int, string, string) {
	t.Helper()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	if params != "" {
		params = params + "," + meta
	} else {
		params = meta
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + params + `}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate"), string(b)
}

// forge returns token with its header replaced by hdr and its signature by
// sig (the payload kept).
func forge(token string, hdr map[string]any, sig string) string {
	parts := strings.Split(token, ".")
	h, _ := json.Marshal(hdr)
	return base64.RawURLEncoding.EncodeToString(h) + "." + parts[1] + "." + sig
}

// hmacWithPublicKey signs token's payload with HS256, using the issuer's
// public key (its JWK, as served) as the HMAC secret: the classic
// algorithm-confusion attack on validators that trust the header's alg.
func hmacWithPublicKey(t *testing.T, token, jwksURL string) string {
	t.Helper()
	set, err := jwk.Fetch(context.Background(), jwksURL)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := set.Key(0)
	kid, _ := k.KeyID()
	pub, _ := json.Marshal(k)
	payload, _ := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[1])
	hdrs := jws.NewHeaders()
	hdrs.Set(jws.KeyIDKey, kid)
	signed, err := jws.Sign(payload, jws.WithKey(jwa.HS256(), pub, jws.WithProtectedHeaders(hdrs)))
	if err != nil {
		t.Fatal(err)
	}
	return string(signed)
}

func TestOAuthAgainstTestOP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs an OpenID Provider")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build internal/tools/testop")
	}
	// The server's URL is known only once it listens; clients ask for it
	// as their resource (RFC 8707), except those testing a wrong audience.
	full := opClient{ID: "full", Secret: "s1"}
	narrow := opClient{ID: "narrow", Secret: "s2"}
	elsewhere := opClient{ID: "elsewhere", Secret: "s3", Audience: "https://elsewhere.example/mcp"}
	expired := opClient{ID: "expired", Secret: "s4", TTL: -5 * time.Minute}
	opaque := opClient{ID: "opaque", Secret: "s5", Opaque: true}
	introspector := opClient{ID: "mcphost", Secret: "s6"}
	op := startOP(t, full, narrow, elsewhere, expired, opaque, introspector)
	stranger := startOP(t, full) // a provider mcphost does not trust

	as := startAuthServer(t, auth.Config{
		Issuers: []string{op.issuer},
		Scopes: []auth.ScopeRule{
			{Scope: "echo:use", Globs: []string{"test_echo"}},
			{Scope: "greet", Globs: []string{"gr*"}},
			{Scope: "items", Globs: []string{"item"}},
		},
		IntrospectionURL: op.issuer + "/oauth/introspect",
		ClientIDEnv:      "ID",
		ClientSecretEnv:  "SECRET",
	}, map[string]string{"ID": introspector.ID, "SECRET": introspector.Secret}, "test")
	metadata := strings.Replace(as.url, "/mcp", "/.well-known/oauth-protected-resource/mcp", 1)

	t.Run("metadata", func(t *testing.T) {
		for _, u := range []string{metadata, strings.TrimSuffix(metadata, "/mcp")} {
			resp, err := http.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			json.NewDecoder(resp.Body).Decode(&doc)
			resp.Body.Close()
			if resp.StatusCode != 200 || doc["resource"] != as.resource ||
				!sameJSON(doc["authorization_servers"], []string{op.issuer}) ||
				!sameJSON(doc["scopes_supported"], []string{"echo:use", "greet", "items"}) ||
				!sameJSON(doc["bearer_methods_supported"], []string{"header"}) {
				t.Errorf("GET %s: %d %v", u, resp.StatusCode, doc)
			}
		}
	})

	good := op.token(t, full, as.resource, "echo:use", "greet", "items")
	noScope := op.token(t, narrow, as.resource)
	bad := good[:len(good)-4] + map[bool]string{true: "AAAA", false: "BBBB"}[!strings.HasSuffix(good, "AAAA")]
	challenge401 := `Bearer resource_metadata="` + metadata + `"`
	refusals := []struct {
		name, token string
		status      int
		challenge   string // a prefix of WWW-Authenticate
		why         string // in the challenge's error_description
	}{
		{"no token", "", 401, challenge401, ""},
		{"wrong audience", op.token(t, elsewhere, ""), 401, challenge401 + `, error="invalid_token"`, "aud"},
		{"wrong issuer", stranger.token(t, full, as.resource), 401, challenge401 + `, error="invalid_token"`, "not trusted"},
		{"expired", op.token(t, expired, as.resource), 401, challenge401 + `, error="invalid_token"`, "exp"},
		{"bad signature", bad, 401, challenge401 + `, error="invalid_token"`, "verif"},
		{"alg none", forge(good, map[string]any{"alg": "none", "typ": "JWT"}, ""), 401, challenge401 + `, error="invalid_token"`, "none"},
		{"HS256 with the public key", hmacWithPublicKey(t, good, op.issuer+"/keys"), 401, challenge401 + `, error="invalid_token"`, "HS256"},
		{"not a bearer token", "", 401, challenge401 + `, error="invalid_request"`, ""},
		// Signed by the provider's own key, valid in every claim, but
		// carrying a critical extension nobody here understands.
		{"unknown crit", op.sign(t, map[string]any{"iss": op.issuer, "aud": as.resource, "sub": "full", "client_id": "full",
			"exp": time.Now().Add(time.Minute).Unix(), "scope": "echo:use"},
			map[string]any{"crit": []string{"x-unknown"}, "x-unknown": true}),
			401, challenge401 + `, error="invalid_token"`, `critical header extension 'x-unknown' is not understood`},
		{"crit-free token signed the same way", "", 200, "", ""},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			status, challenge, body := post(t, as.url, tc.token, "tools/list", "", "")
			switch tc.name {
			case "not a bearer token":
				status, challenge = postRaw(t, as.url, "Basic Zm9vOmJhcg==")
			case "crit-free token signed the same way": // the control: only crit made the difference
				status, challenge, body = post(t, as.url, op.sign(t, map[string]any{"iss": op.issuer, "aud": as.resource, "sub": "full",
					"exp": time.Now().Add(time.Minute).Unix()}, nil), "tools/list", "", "")
			}
			if status != tc.status || !strings.HasPrefix(challenge, tc.challenge) || !strings.Contains(challenge, tc.why) {
				t.Errorf("got %d %q %s; want %d, a challenge starting %q and mentioning %q", status, challenge, body, tc.status, tc.challenge, tc.why)
			}
		})
	}

	t.Run("scopes", func(t *testing.T) {
		cases := []struct {
			name, token, method, params, mcpName string
			status                               int
			want                                 string // in the body, or the challenge's scope on 403
		}{
			{"list with scope", good, "tools/list", "", "", 200, `"test_echo"`},
			{"call with scope", good, "tools/call", `"name":"test_echo","arguments":{"msg":"hi"}`, "test_echo", 200, `"text":"hi"`},
			{"unmatched tool needs only a token", noScope, "tools/call", `"name":"test_weather","arguments":{}`, "test_weather", 200, `"temp"`},
			{"call without scope", noScope, "tools/call", `"name":"test_echo","arguments":{"msg":"hi"}`, "test_echo", 403, "echo:use"},
			{"prompt without scope", noScope, "prompts/get", `"name":"greet","arguments":{"name":"x"}`, "greet", 403, "greet"},
			{"template without scope", noScope, "resources/read", `"uri":"test://items/7"`, "test://items/7", 403, "items"},
			{"template with scope", good, "resources/read", `"uri":"test://items/7"`, "test://items/7", 200, `"contents"`},
			{"listed resource needs only a token", noScope, "resources/read", `"uri":"test://readme"`, "test://readme", 200, `"contents"`},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				status, challenge, body := post(t, as.url, tc.token, tc.method, tc.params, tc.mcpName)
				switch {
				case status != tc.status:
					t.Errorf("got %d %s; want %d", status, body, tc.status)
				case status == 403:
					want := `Bearer error="insufficient_scope", scope="` + tc.want + `", resource_metadata="` + metadata + `"`
					if !strings.HasPrefix(challenge, want) {
						t.Errorf("challenge %q; want it to start %q", challenge, want)
					}
				case !strings.Contains(body, tc.want):
					t.Errorf("body %s; want %s in it", body, tc.want)
				}
			})
		}
		// Lists show only what the token unlocks.
		for _, l := range []struct{ method, hidden string }{
			{"tools/list", `"test_echo"`}, {"prompts/list", `"greet"`}, {"resources/templates/list", `"item"`},
		} {
			_, _, body := post(t, as.url, noScope, l.method, "", "")
			if strings.Contains(body, l.hidden) || !strings.Contains(body, "result") {
				t.Errorf("%s without scopes: %s; want a result without %s", l.method, body, l.hidden)
			}
			_, _, body = post(t, as.url, good, l.method, "", "")
			if !strings.Contains(body, l.hidden) {
				t.Errorf("%s with scopes: %s; want %s", l.method, body, l.hidden)
			}
		}
	})

	t.Run("session era decides on the body, not an unchecked Mcp-Name", func(t *testing.T) {
		send := func(session, body string, hdr ...string) *http.Response {
			req, _ := http.NewRequest(http.MethodPost, as.url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+noScope)
			if session != "" {
				req.Header.Set("Mcp-Session-Id", session)
			}
			for i := 0; i+1 < len(hdr); i += 2 {
				req.Header.Set(hdr[i], hdr[i+1])
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return resp
		}
		init := send("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		sid := init.Header.Get("Mcp-Session-Id")
		if init.StatusCode != 200 || sid == "" {
			t.Fatalf("initialize: %d, session %q", init.StatusCode, sid)
		}
		send(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		resp := send(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_echo","arguments":{"msg":"x"}}}`,
			"Mcp-Method", "tools/call", "Mcp-Name", "test_weather")
		if resp.StatusCode != 403 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `scope="echo:use"`) {
			t.Errorf("got %d %q; want 403 for test_echo", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	})

	t.Run("audit", func(t *testing.T) {
		log := as.audit.String()
		if !strings.Contains(log, `"sub":"full","client_id":"full"`) || !strings.Contains(log, `"sub":"narrow","client_id":"narrow"`) {
			t.Errorf("audit log lacks the callers:\n%s", log)
		}
		if strings.Contains(log, good) {
			t.Error("audit log holds a token")
		}
	})

	t.Run("key rotation", func(t *testing.T) {
		kid := op.rotate(t)
		tok := op.token(t, full, as.resource, "echo:use")
		hdr, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[0])
		if !strings.Contains(string(hdr), kid) {
			t.Fatalf("new token's header %s; want kid %s", hdr, kid)
		}
		status, _, body := post(t, as.url, tok, "tools/call", `"name":"test_echo","arguments":{"msg":"rotated"}`, "test_echo")
		if status != 200 || !strings.Contains(body, "rotated") {
			t.Errorf("after rotation: %d %s", status, body)
		}
	})

	t.Run("introspection", func(t *testing.T) {
		tok := op.token(t, opaque, as.resource, "echo:use")
		if strings.Count(tok, ".") == 2 {
			t.Fatalf("opaque client got a JWT: %s", tok)
		}
		status, _, body := post(t, as.url, tok, "tools/call", `"name":"test_echo","arguments":{"msg":"opaque"}`, "test_echo")
		if status != 200 || !strings.Contains(body, "opaque") {
			t.Errorf("opaque token: %d %s", status, body)
		}
		status, challenge, _ := post(t, as.url, tok+"x", "tools/list", "", "")
		if status != 401 || !strings.Contains(challenge, "not active") {
			t.Errorf("unknown opaque token: %d %q; want 401, not active", status, challenge)
		}
	})

	// The official Go SDK client over golang.org/x/oauth2's
	// client-credentials transport, in both eras.
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run("go-sdk "+version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), guard)
			defer cancel()
			cc := clientcredentials.Config{ClientID: full.ID, ClientSecret: full.Secret, TokenURL: op.issuer + "/oauth/token",
				Scopes: []string{"echo:use"}, EndpointParams: map[string][]string{"resource": {as.resource}}}
			client := mcp.NewClient(&mcp.Implementation{Name: "oauth-judge", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: as.url, HTTPClient: cc.Client(ctx)},
				&mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !hasTool(tools.Tools, "test_echo") {
				t.Errorf("tools/list lacks test_echo")
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "test_echo", Arguments: map[string]any{"msg": "sdk"}})
			if err != nil || sdkText(t, res) != "sdk" {
				t.Fatalf("echo: %v %+v", err, res)
			}
			prompts, err := cs.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range prompts.Prompts {
				if p.Name == "greet" {
					t.Errorf("prompts/list shows greet to a token without the greet scope")
				}
			}
			if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "x"}}); err == nil ||
				!strings.Contains(err.Error(), "403") && !strings.Contains(err.Error(), "Forbidden") {
				t.Errorf("prompts/get greet without its scope: %v; want a 403", err)
			}
		})
	}
}

// postRaw sends tools/list with a raw Authorization header.
func postRaw(t *testing.T, url, authz string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", authz)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

func hasTool(tools []*mcp.Tool, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

func sameJSON(got any, want []string) bool {
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	return string(a) == string(b)
}

// TestOAuthTypeScriptSDK: the official TypeScript SDK client finds the
// authorization server from the 401 alone (resource_metadata, RFC 9728,
// then the issuer's metadata), gets a client-credentials token for the
// resource it asks for (RFC 8707: the client has no default audience, so
// only the resource parameter makes the token acceptable), lists and calls.
// scripts/ts-sdk.sh installs the SDK; .ci/run does, and sets CI=true so a
// missing install fails instead of skipping.
func TestOAuthTypeScriptSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("runs node and an OpenID Provider")
	}
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "internal", "tools", "ts")
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil || serr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node (%v) or the TypeScript SDK (%v) missing: run scripts/ts-sdk.sh", err, serr)
		}
		t.Skip("node or the TypeScript SDK missing: run scripts/ts-sdk.sh")
	}
	ts := opClient{ID: "ts", Secret: "s"}
	op := startOP(t, ts)
	as := startAuthServer(t, auth.Config{
		Issuers: []string{op.issuer},
		Scopes:  []auth.ScopeRule{{Scope: "echo:use", Globs: []string{"test_echo"}}},
	}, nil, "test")
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "oauth-client.mjs", as.url, ts.ID, ts.Secret, op.issuer, "echo:use", "test_echo", `{"msg":"from ts"}`)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ts client: %v", err)
	}
	var got struct {
		Tools  []string
		Result struct {
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("ts client printed %q: %v", out, err)
	}
	if !slices.Contains(got.Tools, "test_echo") || len(got.Result.Content) == 0 || got.Result.Content[0].Text != "from ts" {
		t.Errorf("ts client: %s; want test_echo listed and called", out)
	}
	if log := as.audit.String(); !strings.Contains(log, `"sub":"ts","client_id":"ts"`) {
		t.Errorf("audit log lacks the TS client:\n%s", log)
	}
}
