// Package plugins turns plugins.toml into generations of loaded plugins.
//
// # The folders
//
// Each job has a folder, and imports point one way: plugins imports
// config, source, watch and progress; source imports config (the
// [config.Signature] it verifies) and progress; config, a leaf, imports
// none of them: plugins passes it the checks of url and oci pins, a
// signature table's key and trusted_root files and the store URL
// ([LoadConfig], config.Checks); watch and progress import none of the
// others. Only plugins imports sandbox; config imports sandbox/limits,
// the plain data of a module's limits.
//
//   - plugins/config: plugins.toml → a validated [config.Config] (the
//     [server] table, one [config.Spec] per plugin); errors name the file,
//     line, plugin and key.
//   - plugins/source: where a plugin's Wasm comes from, behind one
//     interface: a file, a Go package built with GOOS=wasip1, an https
//     URL, an OCI registry; the build and download caches and what
//     `mcphost cache` reports and prunes; finding go ([source.FindGo]).
//   - plugins/watch: file watching and the debounce that turns a burst of
//     changes into one batch.
//   - plugins/internal/progress: the log lines of a long load step (a Go build in
//     source, a compile here), repeated while it runs; it imports none of
//     the others.
//   - plugins (this folder): the loader and the registry. It loads modules
//     through sandbox and asks each through its sandbox.Guest (which
//     speaks the plugin's kind: Extism v1, v2 or a component's WIT
//     types), reads its lists, names
//     its tools (namespaced by plugin, always matching
//     ^[a-zA-Z0-9_-]{1,64}$, collisions resolved deterministically with a
//     warning), compiles tool schemas, builds a [Generation]
//     ([Loader.Build]), diffs two generations ([Diff]), holds the current
//     generation for concurrent readers ([Registry]), runs calls, and
//     drives reloads ([Manager], which owns a [watch.Watcher]).
//
// Consent has its own package, [consent]: a Loader with
// [LoaderOptions].Grants gives each module it loads the [consent.Decider]
// for its code (sha256, signer) as its [sandbox.Consent], gives each
// module call its allow_once answers ([consent.Once]) and each tool call
// a place for consent's notes to the person ([consent.Notes]), both on
// the call's context (callstate.go),
// and reads the grants file again on every Build (the Manager watches it
// beside plugins.toml).
//
// It also serves MCP Apps (apps.go): the pages of a plugin's [plugin.ui]
// table as ui://<plugin>/<page> resources named in its tools'
// _meta.ui.resourceUri, the table's CSP on every app a plugin serves, and
// every ui: URI a plugin serves under ui://<plugin>/, a guest's moved there.
//
// It knows nothing about JSON-RPC: it reports changes; it does not send
// notifications.
//
// # Life of a reload
//
// A [Manager] drives reloads; its [watch.Watcher] watches the parent directory
// of plugins.toml and of every plugin's .wasm file, every Go-source
// plugin's directory, the watch globs of every plugin with a build
// command, and the plugin_dir (see [config.Config.WatchPaths]), and
// turns a burst of changes into one batch once the files have been quiet
// for the debounce period (100 ms by default). A batch that forms while a
// reload runs cancels it (killing a build under way) and is loaded next,
// with the paths of both. For each batch:
//
//  1. [LoadConfig] reads the file and expands plugin_dir; any error keeps
//     the old generation, and the error is reported.
//  2. [Loader.Build] loads the new generation beside the old one, reusing
//     every plugin whose code and limits did not change (no recompile, no
//     new instances; a file saved with identical content changes nothing).
//     A plugin that fails keeps its previous version when there was one
//     ([Failure].Kept); the rest load. A url or oci plugin with a
//     [plugin.signature] table is fetched and verified again on every
//     build, so a re-pushed tag is checked like a new release
//     ([Plugin.Signer] is who signed what loaded, [Plugin.Digest] the
//     SHA-256 of the code itself).
//  3. [Registry.Swap] installs it and returns the [Changes]; subscribers
//     (the host) turn them into list_changed notifications. No plugin waits
//     for another: while some still build, compile or start, each plugin
//     that finishes is installed at once ([Registry.Publish]) beside the
//     previous versions of those still loading, and the load's changes
//     are the sum. The initial load's are marked [Changes].Initial. A
//     reload requested while a load runs ends that load (its plugins
//     still loading stop and load again) and applies at once.
//  4. The old generation closes when its last in-flight call releases it;
//     a module closes when the last generation holding it closes.
//  5. The [ReloadReport] goes to the Manager's OnReload (cmd/mcphost logs
//     it as one line and sends its errors to clients).
//
// The watch never stops: whatever failed, the next change is loaded.
//
// # Warm starts
//
// With [LoaderOptions].ListCacheDir set (serve), a plugin whose code,
// limits and config match an entry of the list cache (listcache.go) is
// listed from it and gets a lazy module (lazy.go), compiled and
// instantiated on first use; that first use re-reads the lists and
// signals a change when they differ from the cached ones. On a first
// load with no entry, a plugin whose .wasm carries the mcphost:lists
// custom section (listsection.go, written after mcphost's Go build or by
// [Loader.EmbedLists]) is listed from that section the same way. A
// plugin given by path whose file's metadata is unchanged since it was
// hashed takes its digest from the file digest cache (filedigest.go)
// without reading the file; its first use reads and checks it, and a
// mismatch reloads the plugin.
//
// Every cached file the loader uses (a build, a download, a list entry)
// is checked against the SHA-256 recorded when it was written; a bad one
// is removed, made again and reported once, with its name.
//
// # What a call sends its client
//
// Log messages, progress and other notifications a plugin sends during a
// call pass a token bucket of the call and one of the plugin (flood.go);
// what finds either empty is dropped, and one closing warning per call
// counts it. A failed call is described in the plugin's words
// ([Describe]), without the runtime's internals.
//
// # Names
//
// A tool is exposed as its plugin's tool_prefix (default "<name>_") plus
// its own name, with characters outside [a-zA-Z0-9_-] replaced by '_' and
// names over 64 characters cut and suffixed with a hash ([ToolName]). When
// two tools end up with the same name, the first in config order (then the
// plugin's own order) keeps it and later ones get "_2", "_3", …; prompts
// are not prefixed but are de-duplicated the same way; a resource URI or
// template listed by two plugins goes to the first. Plugin names match
// ^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$ so that prefixes are valid and short.
package plugins
