package kits

import (
	"testing"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
)

// TestASKitKV builds an AssemblyScript plugin that uses mcphost.ts's
// key-value functions (sdk-guest/assemblyscript/testdata/kvcount.ts, in
// place of the template's index.ts) and serves it on two replicas sharing
// one Redis, with the Go SDK client: its counter counts 1…N across both,
// and a non-ASCII value survives the base64 round trip.
func TestASKitKV(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an AssemblyScript plugin and runs mcphost serve")
	}
	wasm := systest.BuildASKitTestdata(t, "kvcount")
	checkKVReplicas(t, "as", wasm)
}
