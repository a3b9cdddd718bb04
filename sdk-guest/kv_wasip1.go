//go:build wasip1

package guest

import "github.com/mcphost/mcphost/abi"

//go:wasmimport extism:host/user kv
func hostKV(payload uint64) uint64

// kvHost is the kv import itself under the Extism kernel, and h (a test
// host) otherwise. extismHost.Call does not know kv, so a plugin that
// never calls KV does not import it.
func kvHost(h HostFuncs) caller {
	if _, ok := h.(extismHost); ok {
		return kvImport{}
	}
	return h
}

type kvImport struct{}

func (kvImport) Call(name string, payload []byte) ([]byte, error) {
	if name != abi.HostKV {
		return extismHost{}.Call(name, payload)
	}
	off, err := writeBlock(payload)
	if err != nil {
		return nil, err
	}
	ret := hostKV(off)
	if ret == 0 {
		return nil, nil
	}
	return readBlock(ret), nil
}
