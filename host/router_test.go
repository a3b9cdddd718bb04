package host

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/mcphost/mcphost/host/internal/jsonrpc"
)

// TestDecodeParamsNamesKinds: a param of the wrong JSON type is refused
// with -32602 naming the type it must be (jsonscan.KindOfType).
func TestDecodeParamsNamesKinds(t *testing.T) {
	tests := []struct {
		params string
		want   string
	}{
		{`{"protocolVersion":5}`, "invalid params: protocolVersion must be a string, not number"},
		{`[1]`, "invalid params: must be an object, not array"},
	}
	for _, tt := range tests {
		var p initializeParams
		err := decodeParams(json.RawMessage(tt.params), &p)
		var je *jsonrpc.Error
		if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || je.Message != tt.want {
			t.Errorf("decodeParams(%s) = %v; want -32602 %q", tt.params, err, tt.want)
		}
	}
}
