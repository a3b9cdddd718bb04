// Package config reads plugins.toml into a validated [Config]: the
// [server] table ([ServerConfig]), the [auth] table ([Auth]) and one [Spec]
// per [[plugin]] table or drop-in *.wasm file.
//
// It owns parsing ([ParseConfig], [LoadConfig]), every check on what a
// user wrote (names, numbers before they reach an API that panics, paths,
// mounts (guard.go: the inventory of what the operator owns,
// [Config.Inventory], from the owned tags of its types; no writable mount
// over any of it, whatever table or policy file it came from; the secret
// files hidden from read-only ones, [Config.Hidden]), url and oci pins, [plugin.signature] tables, build commands and
// their watch globs), the errors that name the file, line, plugin
// and key ([ConfigError], with a "did you mean" for misspelt keys), what a
// watcher should watch for a config ([Config.WatchPaths], policy and
// secrets files included: [Config.DependsOn]) and the secrets a plugin
// may read ([ResolveSecrets]). The files a config names that config
// reads itself ([plugin.ui] pages, policy files, secrets_file) go
// through package opfile, bounded and beneath their directory.
//
// It does not fetch, build or load anything: a Spec says where a plugin's
// Wasm comes from, and package plugins/source gets it. It is a leaf
// (TestImportDirection holds it): of the module it imports only
// plugins/internal/opfile and sandbox/limits, whose [limits.Mount] and
// allowed_hosts rules it shares with the sandbox, so that programs and
// files get the same rules. Whether a url or oci reference is well
// formed, a signature table's key and trusted_root files parse and a
// store URL opens is for the packages that own them (source, store),
// which would link Sigstore, go-containerregistry and go-redis; the
// importer passes their checks in as [Checks] (plugins.LoadConfig), and
// config reports a refusal at its line. The sandbox limits a spec ends up
// with are package plugins' (it builds sandbox.Limits). It knows nothing
// of generations, watching or JSON-RPC.
package config
