package sandbox

import (
	"context"
	"encoding/json"

	"github.com/mcphost/mcphost/abi"
)

// localHostFuncs are the host functions served by the host itself rather
// than routed to the client through the Peer (those with an empty
// abi.HostFunc.Method). Each takes the module's limits and the payload
// (perr when it was not valid JSON) and returns the reply's bytes. They
// know nothing of the runtime, so they survive a change of it.
var localHostFuncs = map[string]func(ctx context.Context, lim Limits, payload []byte, perr error) []byte{
	abi.HostKeyringSecret: keyringSecret,
	abi.HostKV:            kvFunc,   // kv.go
	abi.HostHTTP:          httpFunc, // services.go
}

// keyringSecret serves get_keyring_secret, hyper-mcp's keyring function,
// from the module's own Limits.Secrets: a payload {"service":S,"user":U}
// reads the secret named "S/U", or else the one named U. The reply is the
// secret's raw bytes, or nothing when the plugin may not read it or it is
// not set (hyper-mcp does the same). Neither the request nor the reply is
// logged.
func keyringSecret(_ context.Context, lim Limits, payload []byte, perr error) []byte {
	if perr != nil || len(lim.Secrets) == 0 {
		return nil
	}
	var e abi.KeyringEntry
	if json.Unmarshal(payload, &e) != nil {
		return nil
	}
	if e.Service != "" {
		if v, ok := lim.Secrets[e.Service+"/"+e.User]; ok {
			return []byte(v)
		}
	}
	if v, ok := lim.Secrets[e.User]; ok && e.User != "" {
		return []byte(v)
	}
	return nil
}
