package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcphost/mcphost/abi"
)

// ErrNoKV is the refusal of a KV operation by a module without a KV.
var ErrNoKV = errors.New("no key-value state for this plugin: the host was started without a store for plugin state")

// KVKeysPage is the page size of a keys request that asks for none.
const KVKeysPage = 100

// maxKVKey bounds a key's length, in bytes.
const maxKVKey = 1024

// kvFunc serves the kv host function (abi.HostKV) from the module's
// own Limits.KV: the guest names a key, never a plugin, so it reaches
// only its own state. A failure is {"error":"…"}, which the guest sees as
// an error: never an empty value.
func kvFunc(ctx context.Context, lim Limits, payload []byte, perr error) []byte {
	if perr != nil {
		return hostError(perr)
	}
	var req abi.KVRequest
	if err := json.Unmarshal(payload, &req); err != nil {
		return hostError(fmt.Errorf("kv: %w", err))
	}
	rep, err := KVDo(ctx, lim.KV, req)
	if err != nil {
		return hostError(err)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		return hostError(fmt.Errorf("kv: %w", err))
	}
	return b
}

// KVDo runs one KV operation on kv (nil: [ErrNoKV]); the kv host function
// and wasi:keyvalue both use it.
func KVDo(ctx context.Context, kv KV, req abi.KVRequest) (abi.KVReply, error) {
	var rep abi.KVReply
	if kv == nil {
		return rep, ErrNoKV
	}
	if req.Op != abi.KVKeys && (req.Key == "" || len(req.Key) > maxKVKey) {
		return rep, fmt.Errorf("kv %s: a key must be 1 to %d bytes, got %d", req.Op, maxKVKey, len(req.Key))
	}
	var err error
	switch req.Op {
	case abi.KVGet:
		rep.Value, rep.Found, err = kv.Get(ctx, req.Key)
	case abi.KVSet:
		err = kv.Set(ctx, req.Key, req.Value)
	case abi.KVDelete:
		err = kv.Delete(ctx, req.Key)
	case abi.KVExists:
		rep.Found, err = kv.Exists(ctx, req.Key)
	case abi.KVKeys:
		limit := req.Limit
		if limit <= 0 || limit > 10*KVKeysPage {
			limit = KVKeysPage
		}
		rep.Keys, rep.Cursor, err = kv.Keys(ctx, req.Cursor, limit)
	case abi.KVIncrement:
		rep.Number, err = kv.Increment(ctx, req.Key, req.Delta)
	default:
		return rep, fmt.Errorf("kv: unknown op %q: want get, set, delete, exists, keys or increment", req.Op)
	}
	if err != nil {
		return abi.KVReply{}, fmt.Errorf("kv %s: %w", req.Op, err)
	}
	return rep, nil
}

// checkedKV is a KV as wasi:keyvalue gets it: every operation goes
// through [KVDo], so a component meets the kv host function's key rule
// (1 to 1024 bytes) and page bounds, with the same errors.
type checkedKV struct{ kv KV }

// wasiKV is kv for wasi:keyvalue; nil stays nil (the store does not open).
func wasiKV(kv KV) KV {
	if kv == nil {
		return nil
	}
	return checkedKV{kv}
}

func (c checkedKV) Get(ctx context.Context, key string) ([]byte, bool, error) {
	rep, err := KVDo(ctx, c.kv, abi.KVRequest{Op: abi.KVGet, Key: key})
	return rep.Value, rep.Found, err
}

func (c checkedKV) Set(ctx context.Context, key string, value []byte) error {
	_, err := KVDo(ctx, c.kv, abi.KVRequest{Op: abi.KVSet, Key: key, Value: value})
	return err
}

func (c checkedKV) Delete(ctx context.Context, key string) error {
	_, err := KVDo(ctx, c.kv, abi.KVRequest{Op: abi.KVDelete, Key: key})
	return err
}

func (c checkedKV) Exists(ctx context.Context, key string) (bool, error) {
	rep, err := KVDo(ctx, c.kv, abi.KVRequest{Op: abi.KVExists, Key: key})
	return rep.Found, err
}

func (c checkedKV) Keys(ctx context.Context, cursor string, limit int) ([]string, string, error) {
	rep, err := KVDo(ctx, c.kv, abi.KVRequest{Op: abi.KVKeys, Cursor: cursor, Limit: limit})
	return rep.Keys, rep.Cursor, err
}

func (c checkedKV) Increment(ctx context.Context, key string, delta int64) (int64, error) {
	rep, err := KVDo(ctx, c.kv, abi.KVRequest{Op: abi.KVIncrement, Key: key, Delta: delta})
	return rep.Number, err
}
