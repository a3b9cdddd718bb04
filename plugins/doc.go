// Package plugins turns plugins.toml into generations of loaded plugins.
//
// It owns: reading and validating plugins.toml ([ParseConfig],
// [LoadConfig]; errors name the file, line, plugin and key), building
// Go-source plugins with GOOS=wasip1 into a content-keyed cache, against
// the SDK the binary carries, served without the go command when nothing
// changed, and finding go beyond PATH ([BuildGo], [FindGo]), fetching
// plugins from https URLs and OCI registries into a digest-keyed download
// cache (source*.go, behind one small interface), loading modules through
// sandbox, detecting each plugin's ABI, reading its lists, naming its tools (namespaced by plugin, always
// matching ^[a-zA-Z0-9_-]{1,64}$, collisions resolved deterministically
// with a warning), compiling tool schemas, building a [Generation]
// ([Loader.Build]), diffing two generations ([Diff]), holding the current
// generation for concurrent readers ([Registry]), and watching files to
// reload ([Watcher], [Manager]).
//
// It knows nothing about JSON-RPC: it reports changes; it does not send
// notifications.
//
// # Life of a reload
//
// A [Manager] drives reloads; its [Watcher] watches the parent directory
// of plugins.toml and of every plugin's .wasm file, every Go-source
// plugin's directory and the plugin_dir (see [Config.WatchPaths]), and
// turns a burst of changes into one batch once the files have been quiet
// for the debounce period (100 ms by default). For each batch:
//
//  1. [LoadConfig] reads the file and expands plugin_dir; any error keeps
//     the old generation, and the error is reported.
//  2. [Loader.Build] loads the new generation beside the old one, reusing
//     every plugin whose code and limits did not change (no recompile, no
//     new instances; a file saved with identical content changes nothing).
//     A plugin that fails keeps its previous version when there was one
//     ([Failure].Kept); the rest load.
//  3. [Registry.Swap] installs it and returns the [Changes]; subscribers
//     (the host) turn them into list_changed notifications. The first
//     Swap's are marked [Changes].Initial.
//  4. The old generation closes when its last in-flight call releases it;
//     a module closes when the last generation holding it closes.
//  5. The [ReloadReport] goes to the Manager's OnReload (cmd/mcphost logs
//     it as one line and sends its errors to clients).
//
// The watch never stops: whatever failed, the next change is loaded.
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
