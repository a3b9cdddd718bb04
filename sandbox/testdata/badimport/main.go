//go:build wasip1

// Command badimport imports list_roots with a signature other than
// hyper-mcp's (it takes no parameter); instantiating it must fail.
package main

//go:wasmimport extism:host/user list_roots
func listRoots(uint64) uint64

//go:wasmexport call
func call() int32 { return int32(listRoots(0)) }

func main() {}
