package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPeekID(t *testing.T) {
	tests := []struct {
		name, head, want string
	}{
		{"number first", `{"id":7,"method":"x","params":{"a":"` + strings.Repeat("x", 50), `7`},
		{"string after method", `{"jsonrpc":"2.0","method":"tools/call","id":"a-1","params":{`, `"a-1"`},
		{"whitespace", " { \"id\" : 12 , \"p", `12`},
		{"escaped key", `{"i\u0064":3,`, `3`},
		{"number cut at the end", `{"id":12`, ``},
		{"string cut", `{"id":"abc`, ``},
		{"after params", `{"method":"x","params":{"a":"xxxxxxx`, ``},
		{"null id", `{"id":null,"method":"x"`, ``},
		{"object id", `{"id":{},"method":"x"`, ``},
		{"not an object", `[{"id":1}`, ``},
		{"bad member", `{"id" 1,`, ``},
		{"empty", ``, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(PeekID([]byte(tt.head))); got != tt.want {
				t.Errorf("peekID(%q) = %q; want %q", tt.head, got, tt.want)
			}
		})
	}
}

// FuzzPeekID checks that peekID never panics and that whatever it returns
// is a JSON string or number that was in its input.
func FuzzPeekID(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"x"}`))
	f.Add([]byte(`{"id":"\u00e9\"","params":`))
	f.Fuzz(func(t *testing.T, head []byte) {
		id := PeekID(head)
		if id == nil {
			return
		}
		if !json.Valid(id) || !strings.Contains(string(head), string(id)) {
			t.Fatalf("peekID(%q) = %q: not a JSON value from the input", head, id)
		}
		if c := id[0]; c != '"' && c != '-' && (c < '0' || c > '9') {
			t.Fatalf("peekID(%q) = %q: not a string or number", head, id)
		}
	})
}
