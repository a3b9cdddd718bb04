package guest

import (
	"github.com/mcphost/mcphost/abi"
)

// KV is the plugin's own key-value state, kept by mcphost apart from the
// plugin's instances: in the server's store, which every replica of a
// server shares ([server] store, Redis), or in the process when there is
// none. Use it for what must outlive one instance or be seen by every
// replica: counters, settings, small caches. Variables in the plugin's
// memory stay per instance and per replica, and are lost when the plugin
// restarts.
//
// Keys belong to this plugin alone (the host prefixes them with its
// name) and are charged to its kv_max_keys and kv_max_bytes (the bytes of
// keys and values together). Every method fails with a [*HostError] when
// the store cannot be reached or a quota is reached; the message names
// the store. Return it as the tool's error (guest.ErrorResult) so the
// person sees it; never treat it as an empty value.
var KV KVStore

// KVStore is the type of [KV].
type KVStore struct{}

// Get returns key's value and whether it is set.
func (KVStore) Get(key string) ([]byte, bool, error) {
	rep, err := kvCall(abi.KVRequest{Op: abi.KVGet, Key: key})
	return rep.Value, rep.Found, err
}

// Set sets key to value.
func (KVStore) Set(key string, value []byte) error {
	_, err := kvCall(abi.KVRequest{Op: abi.KVSet, Key: key, Value: value})
	return err
}

// Delete removes key; removing a key that is not set is not an error.
func (KVStore) Delete(key string) error {
	_, err := kvCall(abi.KVRequest{Op: abi.KVDelete, Key: key})
	return err
}

// Exists reports whether key is set.
func (KVStore) Exists(key string) (bool, error) {
	rep, err := kvCall(abi.KVRequest{Op: abi.KVExists, Key: key})
	return rep.Found, err
}

// Keys returns a page of keys after cursor ("" for the first page) and
// the cursor of the next page, "" after the last. With Redis a key may
// appear on two pages; one present for the whole walk appears at least
// once.
func (KVStore) Keys(cursor string) (keys []string, next string, err error) {
	rep, err := kvCall(abi.KVRequest{Op: abi.KVKeys, Cursor: cursor})
	return rep.Keys, rep.Cursor, err
}

// Increment adds delta to the decimal integer at key (a key that is not
// set counts as 0) and returns the sum. It is atomic across replicas: N
// calls anywhere count 1…N.
func (KVStore) Increment(key string, delta int64) (int64, error) {
	rep, err := kvCall(abi.KVRequest{Op: abi.KVIncrement, Key: key, Delta: delta})
	return rep.Number, err
}

// kvCall sends req to the kv host function. Only a plugin that uses KV
// imports it (kvHost), so plugins that do not still run on hosts without
// it (hyper-mcp).
func kvCall(req abi.KVRequest) (abi.KVReply, error) {
	var rep abi.KVReply
	err := callHostOn(kvHost(currentHost()), abi.HostKV, req, &rep)
	return rep, err
}
