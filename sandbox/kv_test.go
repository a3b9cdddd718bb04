package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// mapKV is a KV in a map, as the in-process store keeps one; failing, when
// set, fails every operation as a store that is down does.
type mapKV struct {
	mu      sync.Mutex
	m       map[string][]byte
	failing error
}

func (k *mapKV) Get(_ context.Context, key string) ([]byte, bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.m[key]
	return v, ok, k.failing
}

func (k *mapKV) Set(_ context.Context, key string, v []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.failing != nil {
		return k.failing
	}
	k.m[key] = v
	return nil
}

func (k *mapKV) Delete(_ context.Context, key string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.m, key)
	return k.failing
}

func (k *mapKV) Exists(_ context.Context, key string) (bool, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.m[key]
	return ok, k.failing
}

// Keys pages in key order: the cursor is the last key of the page before.
func (k *mapKV) Keys(_ context.Context, cursor string, limit int) ([]string, string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var keys []string
	for key := range k.m {
		if key > cursor {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	if len(keys) > limit {
		keys = keys[:limit]
		return keys, keys[limit-1], k.failing
	}
	return keys, "", k.failing
}

func (k *mapKV) Increment(_ context.Context, key string, d int64) (int64, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n, _ := strconv.ParseInt(string(k.m[key]), 10, 64)
	n += d
	k.m[key] = []byte(strconv.FormatInt(n, 10))
	return n, k.failing
}

// TestKVHostFunc drives the kv host function from a guest: each module
// reaches its own KV only, a failure is an error the guest sees (never an
// empty value), a module without a KV is told why, and bad requests are
// refused.
func TestKVHostFunc(t *testing.T) {
	t.Parallel()
	kvA, kvB := &mapKV{m: map[string][]byte{}}, &mapKV{m: map[string][]byte{"x": []byte("b's")}}
	a := load(t, Limits{Instances: 1, KV: kvA})
	b := load(t, Limits{Instances: 1, KV: kvB})
	none := load(t, Limits{Instances: 1})
	tests := []struct {
		name    string
		m       *Module
		payload string
		want    string
	}{
		{"get unset", a, `{"op":"get","key":"x"}`, `{}`},
		{"set", a, `{"op":"set","key":"x","value":"aGk="}`, `{}`},
		{"get", a, `{"op":"get","key":"x"}`, `{"value":"aGk=","found":true}`},
		{"b sees its own", b, `{"op":"get","key":"x"}`, `{"value":"YidzCg==","found":true}`},
		{"exists", a, `{"op":"exists","key":"x"}`, `{"found":true}`},
		{"increment", a, `{"op":"increment","key":"n","delta":5}`, `{"number":5}`},
		{"increment again", a, `{"op":"increment","key":"n","delta":-2}`, `{"number":3}`},
		{"keys", a, `{"op":"keys"}`, `{"keys":["n","x"]}`},
		{"delete", a, `{"op":"delete","key":"x"}`, `{}`},
		{"gone", a, `{"op":"exists","key":"x"}`, `{}`},
		{"empty key", a, `{"op":"get","key":""}`, `{"error":"kv get: a key must be 1 to 1024 bytes, got 0"}`},
		{"unknown op", a, `{"op":"flush","key":"x"}`, `{"error":"kv: unknown op \"flush\": want get, set, delete, exists, keys or increment"}`},
		{"no KV", none, `{"op":"get","key":"x"}`, `{"error":"` + ErrNoKV.Error() + `"}`},
	}
	kvB.m["x"] = []byte("b's\n")
	for _, tc := range tests {
		out, err := tc.m.Call(WithPeer(context.Background(), &fakePeer{}), "host", hostCall(abi.HostKV, tc.payload))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if string(out) != tc.want {
			t.Errorf("%s: guest got %s; want %s", tc.name, out, tc.want)
		}
	}
	kvA.failing = errors.New("plugin state in store redis://db:6379/0: store unavailable")
	out, err := a.Call(context.Background(), "host", hostCall(abi.HostKV, `{"op":"get","key":"n"}`))
	if want := `{"error":"kv get: plugin state in store redis://db:6379/0: store unavailable"}`; err != nil || string(out) != want {
		t.Errorf("with the store down: %s, %v; want %s", out, err, want)
	}
}

// FuzzKVFunc feeds the kv host function a guest's arbitrary payload: it
// never panics, and its reply is always JSON, a KVReply or an error.
func FuzzKVFunc(f *testing.F) {
	for _, s := range []string{`{"op":"get","key":"x"}`, `{"op":"set","key":"x","value":"aGk="}`, `{"op":"increment","key":"n","delta":-9223372036854775808}`,
		`{"op":"keys","limit":-1,"cursor":"\u0000"}`, `{"op":"set","key":"x","value":"not base64"}`, `[]`, `{"op":1}`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		lim := Limits{KV: &mapKV{m: map[string][]byte{"n": []byte("41")}}}
		var perr error
		if !json.Valid(payload) {
			perr = errBadPayload
		}
		reply := kvFunc(context.Background(), lim, payload, perr)
		var rep struct {
			abi.KVReply
			Error *string `json:"error"`
		}
		if err := json.Unmarshal(reply, &rep); err != nil {
			t.Fatalf("reply %q is not JSON: %v", reply, err)
		}
	})
}

// countingKV records the limits and keys the store is asked with.
type countingKV struct {
	*mapKV
	calls  int
	limits []int
}

func (k *countingKV) Get(ctx context.Context, key string) ([]byte, bool, error) {
	k.calls++
	return k.mapKV.Get(ctx, key)
}
func (k *countingKV) Set(ctx context.Context, key string, v []byte) error {
	k.calls++
	return k.mapKV.Set(ctx, key, v)
}
func (k *countingKV) Delete(ctx context.Context, key string) error {
	k.calls++
	return k.mapKV.Delete(ctx, key)
}
func (k *countingKV) Exists(ctx context.Context, key string) (bool, error) {
	k.calls++
	return k.mapKV.Exists(ctx, key)
}
func (k *countingKV) Keys(ctx context.Context, cursor string, limit int) ([]string, string, error) {
	k.calls++
	k.limits = append(k.limits, limit)
	return k.mapKV.Keys(ctx, cursor, limit)
}
func (k *countingKV) Increment(ctx context.Context, key string, d int64) (int64, error) {
	k.calls++
	return k.mapKV.Increment(ctx, key, d)
}

// TestWASIKeyValueRules: what wasi:keyvalue gets (wasiKV) applies the kv
// host function's key rule and page bounds, through the one KVDo: a key
// of 0 or 1025 bytes is refused with the very error the kv host function
// gives, before the store is asked; 1 and 1024 bytes pass; a list-keys
// page asks the store for at most 10 pages' worth of keys.
func TestWASIKeyValueRules(t *testing.T) {
	long, longest := strings.Repeat("k", maxKVKey+1), strings.Repeat("k", maxKVKey)
	store := &countingKV{mapKV: &mapKV{m: map[string][]byte{}}}
	w := wasiKV(store)
	ops := map[string]func(key string) error{
		abi.KVGet:       func(k string) error { _, _, err := w.Get(context.Background(), k); return err },
		abi.KVSet:       func(k string) error { return w.Set(context.Background(), k, []byte("v")) },
		abi.KVDelete:    func(k string) error { return w.Delete(context.Background(), k) },
		abi.KVExists:    func(k string) error { _, err := w.Exists(context.Background(), k); return err },
		abi.KVIncrement: func(k string) error { _, err := w.Increment(context.Background(), k, 1); return err },
	}
	for op, do := range ops {
		for _, key := range []string{"", long} {
			before := store.calls
			err := do(key)
			payload, _ := json.Marshal(abi.KVRequest{Op: op, Key: key, Value: []byte("v"), Delta: 1})
			hostFunc := kvFunc(context.Background(), Limits{KV: store}, payload, nil)
			if err == nil || string(hostFunc) != string(hostError(err)) {
				t.Errorf("%s of a %d-byte key: wasi:keyvalue says %v; want the kv host function's %s", op, len(key), err, hostFunc)
			}
			if store.calls != before {
				t.Errorf("%s of a %d-byte key reached the store", op, len(key))
			}
		}
		for _, key := range []string{"k", longest} {
			if err := do(key); err != nil {
				t.Errorf("%s of a %d-byte key: %v; want it served", op, len(key), err)
			}
		}
	}
	for _, limit := range []int{0, -1, 1 << 30} {
		if _, _, err := w.Keys(context.Background(), "", limit); err != nil {
			t.Fatal(err)
		}
	}
	if want := []int{KVKeysPage, KVKeysPage, KVKeysPage}; !slices.Equal(store.limits, want) {
		t.Errorf("the store was asked for pages of %v; want %v", store.limits, want)
	}
	if wasiKV(nil) != nil {
		t.Error("wasiKV(nil) is not nil: a plugin without a KV would open a store")
	}
}
