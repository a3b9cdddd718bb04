// Package source gets a plugin's Wasm onto the local disk, from wherever
// its spec says, behind one interface ([Source]):
//
//   - [File]: a .wasm file named in the config, used as it is;
//   - [Go]: a Go main package built with GOOS=wasip1 into a content-keyed
//     cache ([BuildGo]), against the SDK the binary carries, served
//     without the go command when nothing changed; the go command is
//     found beyond PATH ([FindGo]) and, when it cannot be, the error says
//     where it looked and how to fix it ([GoNotFoundError]);
//   - [URL]: an https URL pinned by SHA-256;
//   - [OCI]: an OCI registry reference pinned by manifest digest.
//
// It also owns the caches those fill: the build and download directories,
// whose entries carry the SHA-256 recorded when they were written
// (sandbox/cachefile) and are checked before use ([Cache.Check]), the
// leases that keep in-use entries from eviction ([Cache]), and what
// `mcphost cache` reports and prunes ([CacheUsage], [PruneCache]),
// leftovers of cut-short writes included ([RemoveLeftovers]). Builds run
// in a process group of their own that dies with mcphost (buildproc_*.go).
//
// It does not parse plugins.toml (package plugins/config does, and the
// loader in package plugins picks the source for each spec), and it does
// not load or run what it fetched.
package source
