package wasip2

import (
	"context"
	"fmt"

	"github.com/mcphost/mcphost/sandbox/internal/component"
)

// KeyValue is a plugin's key-value state (sandbox.KV): what
// wasi:keyvalue and the kv host function serve. Errors name the store
// and say why (it is down, a quota is reached); the guest is given them.
type KeyValue interface {
	// Get returns key's value and whether it is set.
	Get(ctx context.Context, key string) (value []byte, found bool, err error)
	Set(ctx context.Context, key string, value []byte) error
	// Delete removes key; a key that is not set is no error.
	Delete(ctx context.Context, key string) error
	Exists(ctx context.Context, key string) (bool, error)
	// Keys returns up to about limit keys after cursor ("" starts) and
	// the cursor of the next page, "" at the end.
	Keys(ctx context.Context, cursor string, limit int) (keys []string, next string, err error)
	// Increment adds delta to the decimal integer at key (absent is 0)
	// and returns the sum, atomically across replicas.
	Increment(ctx context.Context, key string, delta int64) (int64, error)
}

// kvStoreNames are the identifiers store.open accepts: Spin's "default"
// label, and "" (wasmCloud's default link). Each opens the plugin's own
// bucket; any other is no-such-store.
var kvStoreNames = []string{"default", ""}

// kvKeysPage is the page size of list-keys.
const kvKeysPage = 100

// kvCursors is how many of its latest list-keys cursors a bucket keeps
// (wasi:keyvalue@0.2.0-draft's are u64s standing for the store's own
// strings): a walk uses each once, and one walk, or a few side by side,
// never needs an older one, while a loop of list-keys calls must not
// grow the bucket.
const kvCursors = 16

// kvBucket is a wasi:keyvalue bucket resource: the plugin's KV.
type kvBucket struct {
	kv KeyValue
	// cursors holds the store's cursors behind the latest u64 cursors
	// handed out: cursor n (1-based, issued is the last) is
	// cursors[(n-1)%kvCursors] while n > issued-kvCursors.
	cursors [kvCursors]string
	issued  uint64
}

// cursor returns the store's cursor behind the draft's cursor n.
func (b *kvBucket) cursor(n uint64) (string, error) {
	switch {
	case n == 0 || n > b.issued:
		return "", fmt.Errorf("list-keys: cursor %d was not returned by this bucket", n)
	case n+kvCursors <= b.issued:
		return "", fmt.Errorf("list-keys: cursor %d expired: a bucket keeps its latest %d cursors; list again from the start", n, kvCursors)
	}
	return b.cursors[(n-1)%kvCursors], nil
}

// keep hands out a draft cursor for the store's cursor next.
func (b *kvBucket) keep(next string) uint64 {
	b.issued++
	b.cursors[(b.issued-1)%kvCursors] = next
	return b.issued
}

// addKeyValue serves wasi:keyvalue/store and wasi:keyvalue/atomics as
// wasmCloud (0.2.0-draft: list-keys' cursor an option<u64>, increment's
// delta a u64) and Spin (0.2.0-draft2: the cursor an option<string>,
// the delta an s64) serve them, from State.KV: a guest opens the store
// "default" (or ""), which is the plugin's own bucket, shared by the
// server's replicas. A failure of the store is the error case other,
// with the store's message, never an empty value.
func addKeyValue(add func(iface, name string, f component.HostFunc)) {
	const store, atomics = "wasi:keyvalue/store", "wasi:keyvalue/atomics"
	fail := func(hc *component.HostCall, err error) any {
		return component.Case{Index: 1, Val: component.Case{Index: enumCase(hc.Type.Result.Err, "other"), Val: err.Error()}}
	}
	add(store, "open", func(hc *component.HostCall, args []any) (any, error) {
		w := stateOf(hc)
		name := args[0].(string)
		known := false
		for _, n := range kvStoreNames {
			known = known || name == n
		}
		switch {
		case !known:
			if w.Log != nil {
				w.Log.Warn("wasi:keyvalue: no such store; open \"default\", the plugin's own bucket", "store", name)
			}
			return component.Case{Index: 1, Val: component.Case{Index: enumCase(hc.Type.Result.Err, "no-such-store")}}, nil
		case w.KV == nil:
			return component.Case{Index: 1, Val: component.Case{Index: enumCase(hc.Type.Result.Err, "access-denied")}}, nil
		}
		return ok(&kvBucket{kv: w.KV}), nil
	})
	add(store, "[method]bucket.get", func(hc *component.HostCall, args []any) (any, error) {
		v, found, err := args[0].(*kvBucket).kv.Get(hc.Ctx, args[1].(string))
		switch {
		case err != nil:
			return fail(hc, err), nil
		case !found:
			return ok(component.Case{Index: 0}), nil
		}
		if v == nil {
			v = []byte{}
		}
		return ok(component.Case{Index: 1, Val: v}), nil
	})
	add(store, "[method]bucket.set", func(hc *component.HostCall, args []any) (any, error) {
		if err := args[0].(*kvBucket).kv.Set(hc.Ctx, args[1].(string), args[2].([]byte)); err != nil {
			return fail(hc, err), nil
		}
		return ok(nil), nil
	})
	add(store, "[method]bucket.delete", func(hc *component.HostCall, args []any) (any, error) {
		if err := args[0].(*kvBucket).kv.Delete(hc.Ctx, args[1].(string)); err != nil {
			return fail(hc, err), nil
		}
		return ok(nil), nil
	})
	add(store, "[method]bucket.exists", func(hc *component.HostCall, args []any) (any, error) {
		found, err := args[0].(*kvBucket).kv.Exists(hc.Ctx, args[1].(string))
		if err != nil {
			return fail(hc, err), nil
		}
		return ok(found), nil
	})
	add(store, "[method]bucket.list-keys", func(hc *component.HostCall, args []any) (any, error) {
		b, c := args[0].(*kvBucket), args[1].(component.Case)
		cursor := ""
		switch v := c.Val.(type) {
		case string: // draft2
			cursor = v
		case uint64: // draft: one of the bucket's latest cursors
			var err error
			if cursor, err = b.cursor(v); err != nil {
				return fail(hc, err), nil
			}
		}
		keys, next, err := b.kv.Keys(hc.Ctx, cursor, kvKeysPage)
		if err != nil {
			return fail(hc, err), nil
		}
		list := make([]any, len(keys))
		for i, k := range keys {
			list[i] = k
		}
		nextCase := component.Case{Index: 0}
		if next != "" {
			if hc.Type.Params[1].Type.Elem.Kind == component.String {
				nextCase = component.Case{Index: 1, Val: next}
			} else {
				nextCase = component.Case{Index: 1, Val: b.keep(next)}
			}
		}
		return ok([]any{list, nextCase}), nil
	})
	add(atomics, "increment", func(hc *component.HostCall, args []any) (any, error) {
		b, key := args[0].(*kvBucket), args[1].(string)
		var delta int64
		switch d := args[2].(type) {
		case uint64: // draft
			delta = int64(d)
		case int64: // draft2
			delta = d
		}
		n, err := b.kv.Increment(hc.Ctx, key, delta)
		if err != nil {
			return fail(hc, err), nil
		}
		if hc.Type.Result.Ok.Kind == component.U64 {
			return ok(uint64(n)), nil
		}
		return ok(n), nil
	})
}
