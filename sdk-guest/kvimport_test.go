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
// not), so plugins without state still run on hosts without kv
// (hyper-mcp).
func TestKVImportOnlyWhenUsed(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	for name, want := range map[string]bool{"counter": true, "hashtools": false} {
		b, err := os.ReadFile(example(t, name))
		if err != nil {
			t.Fatal(err)
		}
		cm, err := rt.CompileModule(ctx, b)
		if err != nil {
			t.Fatal(err)
		}
		got := slices.ContainsFunc(cm.ImportedFunctions(), func(f api.FunctionDefinition) bool {
			mod, fn, _ := f.Import()
			return mod == abi.HostNamespace && fn == abi.HostKV
		})
		if got != want {
			t.Errorf("examples/%s imports %s %s: %v; want %v", name, abi.HostNamespace, abi.HostKV, got, want)
		}
	}
}
