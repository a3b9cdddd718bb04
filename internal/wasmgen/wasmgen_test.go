package wasmgen

import (
	"context"
	"slices"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// TestModuleCompiles checks that every kind of export assembles into a
// module wazero accepts, with the exports and imports it promises.
func TestModuleCompiles(t *testing.T) {
	ctx := context.Background()
	seven := int32(-7)
	wasm := Module(
		Func{Name: "out", Output: `{"tools":[]}`},
		Func{Name: "empty", Output: ""},
		Func{Name: "trap", Trap: true},
		Func{Name: "num", I32: &seven},
		Func{Name: "spin", Spin: true},
		Func{Name: "count", Counter: true},
		Func{Start: true}, // not exported
	)
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	var exports []string
	for name, def := range cm.ExportedFunctions() {
		exports = append(exports, name)
		if got := def.ResultTypes(); !slices.Equal(got, []api.ValueType{api.ValueTypeI32}) {
			t.Errorf("export %s returns %v; want one i32", name, got)
		}
	}
	slices.Sort(exports)
	if want := []string{"count", "empty", "num", "out", "spin", "trap"}; !slices.Equal(exports, want) {
		t.Errorf("exports: got %q; want %q", exports, want)
	}
	var imports []string
	for _, def := range cm.ImportedFunctions() {
		mod, name, _ := def.Import()
		imports = append(imports, mod+"."+name)
	}
	if want := []string{"extism:host/env.alloc", "extism:host/env.store_u8", "extism:host/env.output_set"}; !slices.Equal(imports, want) {
		t.Errorf("imports: got %q; want %q", imports, want)
	}
}
