// Package cachefile is how every mcphost cache keeps its entries honest:
// an entry's SHA-256 is recorded beside it when it is written (a file
// named like the entry plus ".sha256") and compared before the entry is
// used, and every write goes to a temporary file renamed into place.
// plugins/source (Go builds, downloads), plugins (the list cache) and
// sandbox (wazero's compiled code) share it so that `mcphost cache` can
// treat all their directories alike.
//
// It also names what a crash leaves behind ([IsLeftover]): temporary
// files and directories that no reader ever looks at.
//
// It owns no directory and decides nothing about eviction; its callers do.
package cachefile
