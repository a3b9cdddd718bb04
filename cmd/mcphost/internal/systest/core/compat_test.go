package core

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The compatibility suite runs guests written the way hyper-mcp's and
// mcp.run's PDKs write plugins (testdata/compat: raw Extism imports, no
// mcphost SDK, strict envelopes) through the real `mcphost serve`, driven
// by the official Go SDK client.

var (
	compatOnce sync.Once
	compatDir  string
	compatErr  error
)

// compatGuests builds testdata/compat/{hyperv2,servlet} once per test
// binary and returns the directory holding hyperv2.wasm and servlet.wasm.
func compatGuests(t *testing.T) string {
	t.Helper()
	compatOnce.Do(func() {
		compatDir, compatErr = systest.TempDir("mcphost-compat")
		if compatErr != nil {
			return
		}
		for _, g := range []string{"hyperv2", "servlet"} {
			if compatErr = systest.BuildReactor(filepath.Join(compatDir, g+".wasm"), "./testdata/compat/"+g); compatErr != nil {
				return
			}
		}
	})
	if compatErr != nil {
		t.Fatalf("building the compatibility guests: %v", compatErr)
	}
	return compatDir
}

var regexpID = regexp.MustCompile(`"context":\{"id":[0-9]+,`)

func TestCompatibility(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs real plugins")
	}
	guests := compatGuests(t)
	dir := t.TempDir()
	secrets := filepath.Join(dir, "secrets.env")
	if err := os.WriteFile(secrets, []byte("B_TOKEN=beta\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Compat") != "yes" {
			http.Error(w, "no header", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusCreated)
		fmt.Fprint(w, "pong")
	}))
	defer web.Close()
	conf := fmt.Sprintf(`
[[plugin]]
name = "hv"
path = %q
allowed_secrets = ["A_TOKEN"]
config = { greeting = "hi" }
allowed_hosts = ["127.0.0.1"]

[[plugin]]
name = "hb"
path = %q
allowed_secrets = ["B_TOKEN"]
secrets_file = %q

[[plugin]]
name = "sv"
path = %q
`, filepath.Join(guests, "hyperv2.wasm"), filepath.Join(guests, "hyperv2.wasm"), secrets, filepath.Join(guests, "servlet.wasm"))
	cfgFile := filepath.Join(dir, "plugins.toml")
	if err := os.WriteFile(cfgFile, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("A_TOKEN", "alpha")
	t.Setenv("B_TOKEN_UNUSED", "x")

	changed := make(chan struct{}, 16)
	client := mcp.NewClient(&mcp.Implementation{Name: "compat", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	// Checked once the server has exited, so that all of stderr is in.
	var s *systest.Server
	t.Cleanup(func() {
		logs := s.Stderr.String()
		for _, want := range []string{"level=INFO msg=\"guest log\" plugin=hv text=\"compat log at info\"",
			"level=WARN msg=\"guest log\" plugin=hv text=\"compat log at warn\"",
			"level=ERROR msg=\"guest log\" plugin=hv text=\"compat log at error\""} {
			if !strings.Contains(logs, want) {
				t.Errorf("stderr lacks %s", want)
			}
		}
		for _, secret := range []string{"alpha", "beta"} {
			if strings.Contains(logs, secret) {
				t.Errorf("stderr holds the secret %q", secret)
			}
		}
	})
	s = systest.StartServer(t, client, "--config", cfgFile, "--no-watch")
	ctx := context.Background()
	cs := s.Session
	call := func(t *testing.T, name string, args map[string]any, meta mcp.Meta) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}

	t.Run("validate", func(t *testing.T) {
		out, err := exec.Command(systest.Binary(t), "validate", "--config", cfgFile).Output()
		if err != nil {
			t.Fatalf("validate: %v\n%s", err, out)
		}
		for _, want := range []string{
			`warning   tool "get_item": schema not valid, served as declared without validation: inputSchema:`,
			"instances single instance (it may keep state between calls",
			"ok: 3 plugins",
		} {
			if !strings.Contains(string(out), want) {
				t.Errorf("validate output lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("strict v2 envelope", func(t *testing.T) {
		// The guest refuses a context without id or _meta, so that it
		// loaded at all proves the load-time lists carried both.
		got := systest.TextOf(t, call(t, "hv_envelope", nil, nil))
		if !strings.Contains(got, `"_meta":{}`) || !regexpID.MatchString(got) {
			t.Errorf("envelope without _meta from the client: %s; want _meta {} and a numeric id", got)
		}
		got = systest.TextOf(t, call(t, "hv_envelope", nil, mcp.Meta{"trace": "t-1"}))
		if !strings.Contains(got, `"_meta":{"trace":"t-1"}`) {
			t.Errorf("envelope with _meta: %s", got)
		}
	})
	t.Run("v1 servlet", func(t *testing.T) {
		if got := systest.TextOf(t, call(t, "sv_greet", map[string]any{"name": "bob"}, nil)); got != "hello bob" {
			t.Errorf("got %q; want hello bob", got)
		}
	})
	t.Run("invalid schema is listed as declared and not enforced", func(t *testing.T) {
		var found *mcp.Tool
		for tl, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			if tl.Name == "hv_get_item" {
				found = tl
			}
		}
		if found == nil {
			t.Fatal("hv_get_item is not listed")
		}
		b, _ := json.Marshal(found.InputSchema)
		if !strings.Contains(string(b), `"required":["id"]`) {
			t.Errorf("schema %s; want it as declared", b)
		}
		if got := systest.TextOf(t, call(t, "hv_get_item", map[string]any{"id": "7"}, nil)); got != "item 7" {
			t.Errorf("got %q; want item 7", got)
		}
	})
	t.Run("one instance keeps state under 200 pipelined calls", func(t *testing.T) {
		const n = 200
		got := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hv_count"})
				if err != nil {
					t.Error(err)
					return
				}
				got[i], _ = strconv.Atoi(systest.TextOf(t, res))
			})
		}
		wg.Wait()
		slices.Sort(got)
		for i, v := range got {
			if v != i+1 {
				t.Fatalf("counts sorted: %v…; want 1…%d, each once", got[:min(len(got), 10)], n)
			}
		}
		for i := 1; i <= 3; i++ {
			if v := systest.TextOf(t, call(t, "hv_vars", nil, nil)); v != strconv.Itoa(i) {
				t.Errorf("Extism var after %d calls: %s", i, v)
			}
		}
	})
	t.Run("dynamic tool", func(t *testing.T) {
		for len(changed) > 0 {
			<-changed
		}
		call(t, "hv_add_tool", map[string]any{"name": "fresh"}, nil)
		select {
		case <-changed:
		case <-time.After(30 * time.Second):
			t.Fatal("no tools/list_changed within 30s")
		}
		listed := false
		for tl, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			listed = listed || tl.Name == "hv_fresh"
		}
		if !listed {
			t.Fatal("hv_fresh is not listed after list_changed")
		}
		if got := systest.TextOf(t, call(t, "hv_fresh", nil, nil)); got != "dynamic fresh" {
			t.Errorf("got %q; want dynamic fresh", got)
		}
		// State survived the re-listing: the counter goes on.
		if got := systest.TextOf(t, call(t, "hv_count", nil, nil)); got != "201" {
			t.Errorf("counter after the re-listing: %s; want 201", got)
		}
		// The other copy of the guest did not get the tool.
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hb_fresh"}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Errorf("hb_fresh: got %v; want unknown tool", err)
		}
	})
	t.Run("secrets stay with their plugin", func(t *testing.T) {
		tests := []struct{ tool, user, want string }{
			{"hv_secret", "A_TOKEN", "alpha"},
			{"hv_secret", "B_TOKEN", ""},
			{"hb_secret", "B_TOKEN", "beta"},
			{"hb_secret", "A_TOKEN", ""},
			{"hb_secret", "B_TOKEN_UNUSED", ""},
		}
		for _, tt := range tests {
			if got := systest.TextOf(t, call(t, tt.tool, map[string]any{"service": "mcphost", "user": tt.user}, nil)); got != tt.want {
				t.Errorf("%s %s: got %q; want %q", tt.tool, tt.user, got, tt.want)
			}
		}
	})
	t.Run("extism host functions", func(t *testing.T) {
		if got := systest.TextOf(t, call(t, "hv_config", map[string]any{"key": "greeting"}, nil)); got != "hi" {
			t.Errorf("config_get: %q", got)
		}
		if got := systest.TextOf(t, call(t, "hb_config", map[string]any{"key": "greeting"}, nil)); got != "<unset>" {
			t.Errorf("config_get of another plugin's key: %q", got)
		}
		if got := systest.TextOf(t, call(t, "hv_http", map[string]any{"url": web.URL + "/ping"}, nil)); got != "201 pong" {
			t.Errorf("http_request: %q; want 201 pong", got)
		}
		sec, _ := strconv.ParseInt(systest.TextOf(t, call(t, "hv_clock", nil, nil)), 10, 64)
		if d := time.Since(time.Unix(sec, 0)); d < -time.Minute || d > time.Minute {
			t.Errorf("clock is off by %v", d)
		}
		res := call(t, "hv_fail", map[string]any{"why": "because"}, nil)
		if !res.IsError || !strings.Contains(systest.TextOf(t, res), "the plugin's own message: because") {
			t.Errorf("error_set: isError %v, %q", res.IsError, systest.TextOf(t, res))
		}
		if got := systest.TextOf(t, call(t, "hv_log", nil, nil)); got != "logged" { // checked on stderr at the end
			t.Errorf("log: %q", got)
		}
	})
}
