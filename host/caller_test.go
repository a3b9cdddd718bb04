package host

import (
	"context"
	"strings"
	"testing"
)

// TestCaller: a Caller on the ctx hides from lists what it may not use and
// refuses it by its exposed name, also when a request names it the
// plugin's own way (server_id) or asks for completions; the audit log
// records who sent each message.
func TestCaller(t *testing.T) {
	audit := &lockedBuffer{} // transcript_test.go
	srv := New(loadRegistry(t, newFixture(), "test"), Options{Logger: quietLog, Audit: audit})
	defer srv.Close()
	denied := map[string]bool{"test_echo": true, "greet": true, "item": true}
	caller := &Caller{Subject: "alice", ClientID: "app", May: func(name string) bool { return !denied[name] }}
	c := startClientCtx(t, srv, WithCaller(context.Background(), caller))
	c.initialize("2025-11-25", `{}`)
	tests := []struct {
		name, req string
		want      string // in the answer
		not       string // not in it
	}{
		{"tools/list", `"method":"tools/list"`, `"test_weather"`, `"test_echo"`},
		{"prompts/list", `"method":"prompts/list"`, `"result"`, `"greet"`},
		{"templates/list", `"method":"resources/templates/list"`, `"result"`, `"item"`},
		{"call", `"method":"tools/call","params":{"name":"test_echo","arguments":{"msg":"x"}}`, `Forbidden: the access token's scopes do not unlock tool test_echo`, `"result"`},
		{"routed call", `"server_id":"test","method":"tools/call","params":{"name":"echo","arguments":{"msg":"x"}}`, `do not unlock tool test_echo`, `"result"`},
		{"allowed call", `"method":"tools/call","params":{"name":"test_weather","arguments":{}}`, `"result"`, `Forbidden`},
		{"prompt", `"method":"prompts/get","params":{"name":"greet","arguments":{"name":"x"}}`, `do not unlock prompt greet`, `"result"`},
		{"template read", `"method":"resources/read","params":{"uri":"test://items/1"}`, `do not unlock resource template item`, `"result"`},
		{"listed resource", `"method":"resources/read","params":{"uri":"test://readme"}`, `"result"`, `Forbidden`},
		{"prompt completion", `"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"name","value":"a"}}`, `do not unlock prompt greet`, `"result"`},
		{"template completion", `"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"test://items/{id}"},"argument":{"name":"id","value":"1"}}`, `do not unlock resource template item`, `"result"`},
	}
	for i, tc := range tests {
		c.send(`{"jsonrpc":"2.0","id":%d,%s}`, i+1, tc.req)
		got := string(c.next().raw)
		if !strings.Contains(got, tc.want) || strings.Contains(got, tc.not) {
			t.Errorf("%s: got %s; want %s and not %s", tc.name, got, tc.want, tc.not)
		}
	}
	log := string(audit.Bytes())
	if n := strings.Count(log, `"dir":"in","session":`); n != strings.Count(log, `"sub":"alice","client_id":"app"`) || n < len(tests) {
		t.Errorf("audit: %d messages in, not all with the caller:\n%s", n, log)
	}
	for line := range strings.Lines(log) {
		if strings.Contains(line, `"dir":"out"`) && strings.Contains(line, `"sub":`) {
			t.Errorf("audit: an answer carries a caller: %s", line)
		}
	}
}
