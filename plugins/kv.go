package plugins

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcphost/mcphost/plugins/store"
	"github.com/mcphost/mcphost/sandbox"
)

// kvTimeout bounds one KV operation, so that a store that does not
// answer fails the operation with an error the plugin can return, well
// before the call's own deadline.
const kvTimeout = 2 * time.Second

// bucketKV is a plugin's sandbox.KV: its bucket in the store, namespaced
// by the plugin's name and bounded by its kv_max_keys and kv_max_bytes.
// Every error names the store and says why.
type bucketKV struct {
	b     store.Bucket
	where string // the store, for messages
}

// pluginKV returns the KV of plugin in st, charged to lim's bounds.
func pluginKV(st store.Store, where, plugin string, lim sandbox.Limits) sandbox.KV {
	return &bucketKV{b: st.KV("plugin:"+plugin, store.Quota{MaxKeys: lim.KVMaxKeys, MaxBytes: lim.KVMaxBytes}), where: where}
}

func (k *bucketKV) fail(ctx context.Context, err error) error {
	var qe *store.QuotaError
	switch {
	case errors.As(err, &qe):
		return fmt.Errorf("plugin state in %s: %w (raise kv_max_%s in the plugin's [[plugin]] table, or delete keys)", k.where, err, qe.Limit)
	case ctx.Err() != nil && !errors.Is(err, store.ErrUnavailable):
		return fmt.Errorf("plugin state in %s: %w: %w", k.where, store.ErrUnavailable, err)
	}
	return fmt.Errorf("plugin state in %s: %w", k.where, err)
}

func (k *bucketKV) Get(ctx context.Context, key string) ([]byte, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, kvTimeout)
	defer cancel()
	v, err := k.b.Get(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, k.fail(ctx, err)
	}
	return v, true, nil
}

func (k *bucketKV) Set(ctx context.Context, key string, value []byte) error {
	ctx, cancel := context.WithTimeout(ctx, kvTimeout)
	defer cancel()
	if err := k.b.Set(ctx, key, value); err != nil {
		return k.fail(ctx, err)
	}
	return nil
}

func (k *bucketKV) Delete(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, kvTimeout)
	defer cancel()
	if err := k.b.Delete(ctx, key); err != nil && !errors.Is(err, store.ErrNotFound) {
		return k.fail(ctx, err)
	}
	return nil
}

func (k *bucketKV) Exists(ctx context.Context, key string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, kvTimeout)
	defer cancel()
	ok, err := k.b.Exists(ctx, key)
	if err != nil {
		return false, k.fail(ctx, err)
	}
	return ok, nil
}

func (k *bucketKV) Keys(ctx context.Context, cursor string, limit int) ([]string, string, error) {
	ctx, cancel := context.WithTimeout(ctx, kvTimeout)
	defer cancel()
	keys, next, err := k.b.Keys(ctx, cursor, limit)
	if err != nil {
		return nil, "", k.fail(ctx, err)
	}
	return keys, next, nil
}

func (k *bucketKV) Increment(ctx context.Context, key string, delta int64) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, kvTimeout)
	defer cancel()
	n, err := k.b.Increment(ctx, key, delta)
	if err != nil {
		return 0, k.fail(ctx, err)
	}
	return n, nil
}
