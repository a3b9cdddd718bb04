//go:build wasip1

package stateless

// exportStateless is abi.ExportStateless; only its presence counts.
//
//go:wasmexport mcphost_stateless
func exportStateless() int32 { return 1 }
