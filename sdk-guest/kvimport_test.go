package guest_test

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/abi"
)

// TestKVImportOnlyWhenUsed: a plugin imports the kv host function only
// when it calls guest.KV (examples/counter does, examples/hashtools does
// not), and the http host function only when it calls guest.HTTP
// (examples/fetch), so plugins without state or outbound HTTP still run
// on hosts without them (hyper-mcp).
func TestKVImportOnlyWhenUsed(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	for name, want := range map[string][2]bool{"counter": {true, false}, "hashtools": {false, false}, "fetch": {false, true}} {
		b, err := os.ReadFile(example(t, name))
		if err != nil {
			t.Fatal(err)
		}
		cm, err := rt.CompileModule(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		for i, host := range []string{abi.HostKV, abi.HostHTTP} {
			got := slices.ContainsFunc(cm.ImportedFunctions(), func(f api.FunctionDefinition) bool {
				mod, fn, _ := f.Import()
				return mod == abi.HostNamespace && fn == host
			})
			if got != want[i] {
				t.Errorf("examples/%s imports %s %s: %v; want %v", name, abi.HostNamespace, host, got, want[i])
			}
		}
	}
}
