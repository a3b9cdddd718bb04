package guest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

func TestHostCalls(t *testing.T) {
	h := useRegistry(t)
	h.replies[abi.HostSample] = `{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m","stopReason":"endTurn"}`
	h.replies[abi.HostElicit] = `{"action":"accept","content":{"name":"x"}}`
	ctx := &Context{Context: abi.Context{Meta: json.RawMessage(`{"progressToken":"tok-1"}`)}}

	if err := ctx.Log(LevelInfo, "started"); err != nil {
		t.Fatal(err)
	}
	if err := ctx.LogData(LevelWarning, "db", map[string]int{"rows": 3}); err != nil {
		t.Fatal(err)
	}
	if err := ctx.Progress(50, 100, "half"); err != nil {
		t.Fatal(err)
	}
	if err := ctx.Progress(1, 0, ""); err != nil {
		t.Fatal(err)
	}
	r, err := ctx.Sample(abi.CreateMessageParams{Messages: []abi.SamplingMessage{{Role: "user", Content: Text("q")}}, MaxTokens: 10})
	if err != nil || r.Content.Text != "hi" || r.Model != "m" {
		t.Errorf("Sample = %+v, %v; want text hi from model m", r, err)
	}
	e, err := ctx.Elicit(abi.ElicitParams{Message: "name?", RequestedSchema: json.RawMessage(`{"type":"object"}`)})
	if err != nil || e.Action != "accept" || string(e.Content) != `{"name":"x"}` {
		t.Errorf("Elicit = %+v, %v; want accept {\"name\":\"x\"}", e, err)
	}
	if err := ctx.ResourceUpdated("test://r"); err != nil {
		t.Fatal(err)
	}
	if err := ctx.URLElicitationComplete("el-1"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []func() error{NotifyToolListChanged, NotifyPromptListChanged, NotifyResourceListChanged} {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	want := []hostCall{
		{abi.HostLog, `{"level":"info","data":"started"}`},
		{abi.HostLog, `{"level":"warning","logger":"db","data":{"rows":3}}`},
		{abi.HostProgress, `{"progressToken":"tok-1","progress":50,"total":100,"message":"half"}`},
		{abi.HostProgress, `{"progressToken":"tok-1","progress":1}`},
		{abi.HostSample, `{"messages":[{"role":"user","content":{"type":"text","text":"q"}}],"maxTokens":10}`},
		{abi.HostElicit, `{"message":"name?","requestedSchema":{"type":"object"}}`},
		{abi.HostResourceUpdated, `{"uri":"test://r"}`},
		{abi.HostURLElicitComplete, `{"elicitationId":"el-1"}`},
		{abi.HostToolListChanged, ``},
		{abi.HostPromptListChanged, ``},
		{abi.HostResourceListChanged, ``},
	}
	got := h.recorded()
	if len(got) != len(want) {
		t.Fatalf("got %d host calls %v; want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("call %d: got %s %s; want %s %s", i, got[i].name, got[i].payload, want[i].name, want[i].payload)
		}
	}
}

func TestProgressWithoutToken(t *testing.T) {
	h := useRegistry(t)
	ctx := &Context{Context: abi.Context{Meta: json.RawMessage(`{"other":1}`)}}
	if err := ctx.Progress(1, 2, "x"); err != nil || len(h.recorded()) != 0 {
		t.Errorf("Progress without a token: err %v, calls %v; want no call", err, h.recorded())
	}
	for _, meta := range []string{``, `{"progressToken":null}`, `not json`} {
		c := &Context{Context: abi.Context{Meta: json.RawMessage(meta)}}
		if tok := c.ProgressToken(); tok != nil {
			t.Errorf("ProgressToken(%q) = %s; want nil", meta, tok)
		}
	}
}

func TestHostErrors(t *testing.T) {
	h := useRegistry(t)
	h.replies[abi.HostSample] = `{"error":"client does not support sampling"}`
	h.replies[abi.HostElicit] = `not json`
	h.replies[abi.HostLog] = `{"error":"no session"}`
	ctx := &Context{}
	_, err := ctx.Sample(abi.CreateMessageParams{})
	var he *HostError
	if !errors.As(err, &he) || he.Func != abi.HostSample || he.Message != "client does not support sampling" {
		t.Errorf("Sample error = %v; want a *HostError from create_message", err)
	}
	if _, err := ctx.Elicit(abi.ElicitParams{}); err == nil || !strings.Contains(err.Error(), "decode reply") {
		t.Errorf("Elicit with a bad reply: error %v; want a decode error", err)
	}
	if _, err := ctx.Roots(); err == nil || !strings.Contains(err.Error(), "empty reply") {
		t.Errorf("Roots with no reply: error %v; want empty reply", err)
	}
	if err := ctx.Log(LevelInfo, "x"); !errors.As(err, &he) {
		t.Errorf("Log with an error reply: %v; want a *HostError", err)
	}
	if err := ctx.LogData(LevelInfo, "", func() {}); err == nil {
		t.Errorf("LogData(func): nil error; want an encoding error")
	}
}

func TestNoHost(t *testing.T) {
	restore := SetHostForTesting(platformHost())
	defer restore()
	if err := NotifyToolListChanged(); !errors.Is(err, ErrNoHost) {
		t.Errorf("NotifyToolListChanged without a host: %v; want ErrNoHost", err)
	}
	if _, ok := Config("x"); ok {
		t.Errorf("Config without a host: ok; want missing")
	}
	if _, err := HTTP(&HTTPRequest{URL: "https://example.com"}); !errors.Is(err, ErrNoHost) {
		t.Errorf("HTTP without a host: %v; want ErrNoHost", err)
	}
	Logf(LevelInfo, "dropped %d", 1) // must not panic
}

func TestConfigAndLogf(t *testing.T) {
	h := useRegistry(t)
	h.config["root"] = "/data"
	if v, ok := Config("root"); !ok || v != "/data" {
		t.Errorf("Config(root) = %q, %v; want /data, true", v, ok)
	}
	if _, ok := Config("nope"); ok {
		t.Errorf("Config(nope) ok; want missing")
	}
	Logf(LevelWarning, "n=%d", 3)
	if len(h.logs) != 1 || h.logs[0] != "warning: n=3" {
		t.Errorf("logs = %v; want [warning: n=3]", h.logs)
	}
}

func TestHTTP(t *testing.T) {
	h := useRegistry(t)
	var seen *HTTPRequest
	h.http = func(r *HTTPRequest) (*HTTPResponse, error) {
		seen = r
		return &HTTPResponse{Status: 200, Header: map[string]string{"content-type": "text/plain"}, Body: []byte("ok")}, nil
	}
	resp, err := HTTP(&HTTPRequest{Method: "POST", URL: "https://example.com/x", Body: []byte("b")})
	if err != nil || resp.Status != 200 || string(resp.Body) != "ok" || seen.Method != "POST" {
		t.Fatalf("HTTP = %+v, %v; want 200 ok", resp, err)
	}
	if got := resp.HeaderValue("Content-Type"); got != "text/plain" {
		t.Errorf("HeaderValue(Content-Type) = %q; want text/plain", got)
	}
	for _, u := range []string{"", "ftp://x", "example.com"} {
		if _, err := HTTP(&HTTPRequest{URL: u}); err == nil {
			t.Errorf("HTTP(%q): nil error; want a bad URL error", u)
		}
	}
	if _, err := HTTP(nil); err == nil {
		t.Errorf("HTTP(nil): nil error; want one")
	}
}
