// Package sdksrc carries the source of the guest SDK (abi, sdk-guest and
// sdk-guest/guesttest) inside the mcphost binary, as the module
// github.com/mcphost/mcphost cut down to those three packages.
//
// plugins builds Go-source plugins against it and cmd/mcphost's `new`
// scaffolds plugins that need it, so a plugin builds in any directory,
// offline, whether or not the module is published. The archive is
// generated from the repository by `go generate` (which runs this
// package's test with -update); the test fails when it is out of date.
//
// It owns nothing else: not the build, not the go.mod wiring.
package sdksrc
