package jsonrpc

import "testing"

func TestSetMember(t *testing.T) {
	tests := []struct{ obj, want string }{
		{``, `{"progressToken":7}`},
		{`{}`, `{"progressToken":7}`},
		{`{"progress":1}`, `{"progress":1,"progressToken":7}`},
		{`{"progressToken":"x","progress":1,"progressToken":2}`, `{"progressToken":7,"progress":1}`},
		{`[1]`, `{"progressToken":7}`},
	}
	for _, tt := range tests {
		if got := string(SetMember([]byte(tt.obj), "progressToken", []byte(`7`))); got != tt.want {
			t.Errorf("SetMember(%s): got %s; want %s", tt.obj, got, tt.want)
		}
	}
}
