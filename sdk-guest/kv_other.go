//go:build !wasip1

package guest

// kvHost is h: outside Wasm, the test host serves kv through Call.
func kvHost(h HostFuncs) caller { return h }
