package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestComponentKeyValue runs the C component kvcount, which keeps state
// through wasi:keyvalue@0.2.0-draft (store, atomics) as wasmCloud's
// components do. Two modules on one KV (two replicas on one store) count
// 1…N together; set, get, exists, delete and a list-keys walk over
// several pages see the same bucket; only the store "default" opens; a
// module without a KV is denied; a store that fails is the error case
// other with its message, never an empty value; a key of 0 or 1025
// bytes is refused as the kv host function refuses it.
func TestComponentKeyValue(t *testing.T) {
	wasm := componentWasm(t, "kvcount")
	kv := &mapKV{m: map[string][]byte{}}
	load := func(lim Limits) *Module {
		lim.Instances = 1
		m, err := testEngine.Load(context.Background(), "kvcount", wasm, lim)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close(context.Background()) })
		return m
	}
	call := func(m *Module, tool, args string) (string, bool) {
		t.Helper()
		res, err := componentCall(t, m, tool, args)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return res.Content[0].Text, res.IsError
	}
	a, b := load(Limits{KV: kv}), load(Limits{KV: kv})
	for i := 1; i <= 6; i++ {
		if got, isErr := call([]*Module{a, b}[i%2], "count", `{"key":"visits"}`); isErr || got != fmt.Sprint(i) {
			t.Fatalf("count %d: %q (isError %v); want %d", i, got, isErr, i)
		}
	}
	if got, _ := call(b, "put", `{"key":"greeting","value":"grüß dich"}`); got != "grüß dich exists=1" {
		t.Errorf("put: %q; want the value read back and exists=1", got)
	}
	if got, _ := call(a, "remove", `{"key":"greeting"}`); got != "exists=0" {
		t.Errorf("remove: %q; want exists=0", got)
	}
	for i := range 250 { // three pages of list-keys
		kv.m[fmt.Sprintf("k%03d", i)] = []byte("v")
	}
	got, isErr := call(a, "keys", `{}`)
	if lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n"); isErr || len(lines) != 251 || lines[0] != "k000" || lines[250] != "visits" {
		t.Errorf("keys: %d lines, isError %v; want k000…k249 and visits", len(lines), isErr)
	}
	for name, want := range map[string]string{"default": "opened", "": "opened", "other": "open: no-such-store"} {
		if got, _ := call(a, "open-store", fmt.Sprintf(`{"name":%q}`, name)); got != want {
			t.Errorf("open-store %q: %q; want %q", name, got, want)
		}
	}
	// The kv host function's key rule holds for wasi:keyvalue too.
	for _, key := range []string{"", strings.Repeat("k", 1025)} {
		got, isErr := call(a, "put", fmt.Sprintf(`{"key":%q,"value":"v"}`, key))
		if want := fmt.Sprintf("a key must be 1 to 1024 bytes, got %d", len(key)); !isErr || !strings.Contains(got, want) {
			t.Errorf("put of a %d-byte key: %q (isError %v); want an error saying %q", len(key), got, isErr, want)
		}
	}
	if _, ok := kv.m[strings.Repeat("k", 1025)]; ok {
		t.Error("a 1025-byte key reached the store")
	}
	if got, isErr := call(load(Limits{}), "count", `{"key":"visits"}`); !isErr || got != "open: access-denied" {
		t.Errorf("count without a KV: %q; want open: access-denied", got)
	}
	kv.failing = errors.New("plugin state in store redis://db:6379/0: store unavailable")
	if got, isErr := call(b, "count", `{"key":"visits"}`); !isErr || got != "increment: other: kv increment: plugin state in store redis://db:6379/0: store unavailable" {
		t.Errorf("count with the store down: %q; want the error case other naming the store", got)
	}
}
