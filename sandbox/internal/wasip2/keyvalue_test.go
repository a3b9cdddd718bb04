package wasip2

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/sandbox/internal/component"
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

// TestKeyValueDraftCursors: wasi:keyvalue@0.2.0-draft's u64 list-keys
// cursors stand for the store's; a bucket keeps only its latest
// kvCursors of them, however many walks a guest starts: a walk over 250
// keys still ends, a cursor older than the latest kvCursors has expired
// (and says so), one never handed out is refused.
func TestKeyValueDraftCursors(t *testing.T) {
	fns := map[string]component.HostFunc{}
	addKeyValue(func(iface, name string, f component.HostFunc) { fns[component.Key(iface, name)] = f })
	listKeys := fns[component.Key("wasi:keyvalue/store@0.2.0-draft", "[method]bucket.list-keys")]
	kv := &pagedKV{m: map[string][]byte{}}
	for i := range 250 {
		kv.m[strconv.Itoa(1000+i)] = []byte("v")
	}
	errType := &component.Type{Kind: component.Variant, Fields: []component.Field{{Name: "no-such-store"}, {Name: "access-denied"}, {Name: "other", Type: &component.Type{Kind: component.String}}}}
	hc := &component.HostCall{Ctx: context.Background(), Inst: &component.Instance{State: &State{KV: kv}}, Type: &component.FuncType{
		Params: []component.Field{{Name: "self"}, {Name: "cursor", Type: &component.Type{Kind: component.Option, Elem: &component.Type{Kind: component.U64}}}},
		Result: &component.Type{Kind: component.Result, Err: errType},
	}}
	b := &kvBucket{kv: kv}
	// page lists from cursor and returns the keys, the next cursor (0 at
	// the end) or the error's text.
	page := func(cursor component.Case) (keys []any, next uint64, errText string) {
		out, err := listKeys(hc, []any{b, cursor})
		if err != nil {
			t.Fatal(err)
		}
		res := out.(component.Case)
		if res.Index != 0 {
			return nil, 0, res.Val.(component.Case).Val.(string)
		}
		rec := res.Val.([]any)
		if c := rec[1].(component.Case); c.Index == 1 {
			next = c.Val.(uint64)
		}
		return rec[0].([]any), next, ""
	}
	walk := func() (n int) {
		cursor := component.Case{Index: 0}
		for {
			keys, next, e := page(cursor)
			if e != "" {
				t.Fatalf("walk: %s", e)
			}
			n += len(keys)
			if next == 0 {
				return n
			}
			cursor = component.Case{Index: 1, Val: next}
		}
	}
	if n := walk(); n != 250 {
		t.Fatalf("a walk listed %d keys; want 250", n)
	}
	_, first, _ := page(component.Case{Index: 0}) // cursor 3, soon old
	for range 100 {                               // a guest restarting its walk again and again
		walk()
	}
	if b.issued != 3+100*2 || len(b.cursors) != kvCursors {
		t.Errorf("issued %d cursors, keeping %d; want 203, keeping %d", b.issued, len(b.cursors), kvCursors)
	}
	issued := b.issued // the pages below hand out more
	tests := []struct {
		cursor uint64
		want   string // "" when the page lists
	}{
		{issued + 1000, "was not returned by this bucket"},
		{first, "expired: a bucket keeps its latest 16 cursors; list again from the start"},
		{issued - kvCursors, "expired"},
		{issued - kvCursors + 1, ""},
		{issued, ""},
		{0, "was not returned by this bucket"},
	}
	for _, tt := range tests {
		keys, _, e := page(component.Case{Index: 1, Val: tt.cursor})
		if tt.want == "" && (e != "" || len(keys) == 0) || tt.want != "" && !strings.Contains(e, tt.want) {
			t.Errorf("cursor %d: %d keys, error %q; want %q", tt.cursor, len(keys), e, tt.want)
		}
	}
}
