package host

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestCallRunsTheDispatchPath(t *testing.T) {
	srv := newServer(t, newFixture(), Options{})
	tests := []struct {
		method, params, want string
	}{
		{"ping", ``, `"result":{}`},
		{"tools/call", `{"name":"nope"}`, `"code":-32602`},
		{"frobnicate", ``, `"code":-32601`},
	}
	for _, tt := range tests {
		got, err := srv.Call(context.Background(), tt.method, json.RawMessage(tt.params), nil)
		if err != nil {
			t.Fatalf("%s: %v", tt.method, err)
		}
		if !strings.Contains(string(got), tt.want) || !strings.Contains(string(got), `"id":1`) {
			t.Errorf("%s: got %s; want it to contain %s and id 1", tt.method, got, tt.want)
		}
	}
}
