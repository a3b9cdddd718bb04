package extism

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// sameJSON reports whether a and b decode to the same value.
func sameJSON(a, b []byte) bool {
	var va, vb any
	return json.Unmarshal(a, &va) == nil && json.Unmarshal(b, &vb) == nil && reflect.DeepEqual(va, vb)
}

// appendContext writes what json.Marshal writes, up to the escaping of
// strings: encoding/json reads back the same context.
func TestAppendContextMatchesMarshal(t *testing.T) {
	for _, cc := range []abi.Context{
		{},
		{ID: json.RawMessage(`1`), Meta: json.RawMessage(`{"progressToken":"t"}`), ProtocolVersion: "2025-11-25", Plugin: "echo"},
		{ID: json.RawMessage(`"a b"`), Meta: json.RawMessage("{ \"k\" :\t[1, 2]\n}")},
		{ID: json.RawMessage(`"<&>"`), Plugin: "p<>&", ProtocolVersion: "ünï\u2028\"\\\x01"},
		{Meta: json.RawMessage(`{}`)},
		{ID: json.RawMessage("\"\u2028\u2029x\""), Meta: json.RawMessage(`{"a":"\u2028"}`)},
	} {
		want, err := json.Marshal(cc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendContext(nil, cc)
		if err != nil || !sameJSON(got, want) {
			t.Errorf("appendContext(%+v) = %s, %v; want %s", cc, got, err, want)
		}
	}
	if _, err := appendContext(nil, abi.Context{Meta: json.RawMessage(`{"a":`)}); err == nil {
		t.Error("invalid _meta accepted")
	}
}
