// Package watch reports changes to a set of files and directories as
// debounced batches ([Watcher]), so that an editor's save, a cp or a
// go build -o, each of which writes in several steps, becomes one reload
// once the files are quiet. [Debounce] is the batching on its own, which
// package plugins also uses for guests that signal a list change.
//
// It owns the watch list (the parent directory of every path, or the
// nearest existing ancestor until a path appears; a path whose last
// element is a glob matches the files it names), the debounce, and the
// rule that a newer batch cancels the work on the one before
// ([ErrNewerChange]); it never gives up on a directory it cannot watch. It does not know what
// the paths are for: package plugins decides what to watch
// (config.Config.WatchPaths) and what a batch means.
package watch
