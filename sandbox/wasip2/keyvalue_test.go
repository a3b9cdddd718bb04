package wasip2

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/mcphost/mcphost/sandbox/component"
)

// pagedKV is a KeyValue over a map whose Keys pages in key order (the
// cursor is the last key of the page before).
type pagedKV struct{ m map[string][]byte }

func (k *pagedKV) Get(_ context.Context, key string) ([]byte, bool, error) {
	v, ok := k.m[key]
	return v, ok, nil
}
func (k *pagedKV) Set(_ context.Context, key string, v []byte) error { k.m[key] = v; return nil }
func (k *pagedKV) Delete(_ context.Context, key string) error        { delete(k.m, key); return nil }
func (k *pagedKV) Exists(_ context.Context, key string) (bool, error) {
	_, ok := k.m[key]
	return ok, nil
}
func (k *pagedKV) Keys(_ context.Context, cursor string, limit int) ([]string, string, error) {
	var keys []string
	for key := range k.m {
		if key > cursor {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	if len(keys) > limit {
		return keys[:limit], keys[limit-1], nil
	}
	return keys, "", nil
}
func (k *pagedKV) Increment(_ context.Context, key string, d int64) (int64, error) {
	n, _ := strconv.ParseInt(string(k.m[key]), 10, 64)
	n += d
	k.m[key] = []byte(strconv.FormatInt(n, 10))
	return n, nil
}

// TestKeyValueDraft2: the shapes of Spin's wasi:keyvalue@0.2.0-draft2 (a
// string cursor for list-keys, an s64 delta and sum for increment) are
// served alongside draft's (kvcount, TestComponentKeyValue in sandbox):
// a list-keys walk over 250 keys in pages of 100 ends with no cursor, and
// increment takes and returns s64.
func TestKeyValueDraft2(t *testing.T) {
	fns := map[string]component.HostFunc{}
	addKeyValue(func(iface, name string, f component.HostFunc) { fns[component.Key(iface, name)] = f })
	kv := &pagedKV{m: map[string][]byte{}}
	for i := range 250 {
		kv.m[strconv.Itoa(1000+i)] = []byte("v")
	}
	errType := &component.Type{Kind: component.Variant, Fields: []component.Field{{Name: "no-such-store"}, {Name: "access-denied"}, {Name: "other", Type: &component.Type{Kind: component.String}}}}
	hc := &component.HostCall{Ctx: context.Background(), Inst: &component.Instance{State: &State{KV: kv}}}
	b := &kvBucket{kv: kv}

	hc.Type = &component.FuncType{
		Params: []component.Field{{Name: "self"}, {Name: "cursor", Type: &component.Type{Kind: component.Option, Elem: &component.Type{Kind: component.String}}}},
		Result: &component.Type{Kind: component.Result, Err: errType},
	}
	var all []any
	cursor := component.Case{Index: 0}
	for page := 0; ; page++ {
		out, err := fns[component.Key("wasi:keyvalue/store@0.2.0-draft2", "[method]bucket.list-keys")](hc, []any{b, cursor})
		if err != nil {
			t.Fatal(err)
		}
		res := out.(component.Case)
		if res.Index != 0 {
			t.Fatalf("page %d: %+v", page, res)
		}
		rec := res.Val.([]any)
		all = append(all, rec[0].([]any)...)
		cursor = rec[1].(component.Case)
		if cursor.Index == 0 {
			break
		}
		if _, ok := cursor.Val.(string); !ok {
			t.Fatalf("page %d: cursor %#v; want a string (draft2)", page, cursor.Val)
		}
	}
	if len(all) != 250 || all[0] != "1000" || all[249] != "1249" {
		t.Errorf("list-keys walked %d keys; want 250, 1000…1249", len(all))
	}

	hc.Type = &component.FuncType{Result: &component.Type{Kind: component.Result, Ok: &component.Type{Kind: component.S64}, Err: errType}}
	for _, d := range []int64{5, -7} {
		out, err := fns[component.Key("wasi:keyvalue/atomics@0.2.0-draft2", "increment")](hc, []any{b, "n", d})
		if err != nil {
			t.Fatal(err)
		}
		if got := out.(component.Case).Val; d == -7 && got != int64(-2) {
			t.Errorf("increment by -7 after 5: %#v; want int64 -2", got)
		}
	}
}
