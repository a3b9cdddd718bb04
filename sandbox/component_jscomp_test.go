package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestComponentJS runs the componentize-js component (about 12 MB of
// SpiderMonkey): fetch() through wasi:http to a loopback server, allowed
// and refused, and crypto.getRandomValues through wasi:random. Its
// compiled code is cached beside the built component, so only the first
// run pays the cold compile (30–60 s).
func TestComponentJS(t *testing.T) {
	if raceEnabled {
		t.Skip("compiling the 12 MB JS component takes minutes under -race; the C component covers the same host functions")
	}
	wasm := componentWasm(t, "app")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s from %s", r.URL.Query().Get("who"), r.Method)
	}))
	defer srv.Close()
	ctx := context.Background()
	dir := filepath.Join(filepath.Dir(componentDir()), "wazero-cache")
	e, err := NewEngine(ctx, EngineOptions{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(ctx)
	start := time.Now()
	m, err := e.Load(ctx, "app", wasm, Limits{Instances: 1, Timeout: 20 * time.Second, AllowedHosts: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(ctx)
	t.Logf("loaded in %v", time.Since(start).Round(time.Millisecond))

	res, err := componentCall(t, m, "fetch-text", `{"url":"`+srv.URL+`/?who=w%C3%B6rld"}`)
	if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].Text != "200 hello wörld from GET" {
		t.Errorf("fetch-text allowed: %+v, %v; want 200 hello wörld from GET", res, err)
	}
	refused := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	res, err = componentCall(t, m, "fetch-text", `{"url":"`+refused+`/"}`)
	if err != nil || !res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, "fetch failed") {
		t.Errorf("fetch-text refused: %+v, %v; want isError with fetch failed", res, err)
	}
	res, err = componentCall(t, m, "random-bytes", `{"n":32}`)
	var got struct{ Result []int }
	if err != nil || json.Unmarshal(res.StructuredContent, &got) != nil || len(got.Result) != 32 {
		t.Fatalf("random-bytes: %+v, %v", res, err)
	}
	zeros := 0
	for _, b := range got.Result {
		if b == 0 {
			zeros++
		}
	}
	if zeros > 8 {
		t.Errorf("random-bytes: %v has %d zeros of 32", got.Result, zeros)
	}
}
