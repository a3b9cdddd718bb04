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
//   - [OCI]: an OCI registry reference pinned by manifest digest;
//   - [Command]: a .wasm file written by a build command of the plugin's
//     own, in any language (build = … in plugins.toml), run when the
//     file is missing or older than one of its watched sources; what the
//     build prints is logged line by line as it comes ([LogBuildOutput]).
//
// A url or oci source with a [Signature] (a [plugin.signature] table) is
// verified while it is fetched, in-process with sigstore-go (verify.go):
// the Sigstore bundle is found (OCI referrers, the referrers tag, a legacy
// cosign .sig tag, or a bundle URL), checked against the exact identity
// and issuer or the pinned key, and what was verified is what Fetch
// returns; [Verify] does the same for `mcphost verify`. A refusal is a
// [SignatureError] wrapping its reason ([ErrNoSignature], …). The
// public-good trusted root comes from TUF, cached under the user cache
// directory.
//
// It also owns the caches those fill: the build and download directories,
// whose entries carry the SHA-256 recorded when they were written
// (internal/cachefile) and are checked before use ([Cache.Check]), the
// leases that keep in-use entries from eviction ([Cache]), and what
// `mcphost cache` reports and prunes ([CacheUsage], [PruneCache]),
// leftovers of cut-short writes included ([RemoveLeftovers]). Builds, Go
// or commands, run in a process group of their own that is killed when
// their ctx ends and dies with mcphost (buildproc_*.go).
//
// It does not parse plugins.toml (package plugins/config does, and the
// loader in package plugins picks the source for each spec), and it does
// not load or run what it fetched.
package source
