// Package opfile is the one reader of the files the operator names:
// skill directories, [plugin.ui] pages, wassette policy files,
// secrets_file, the grants file (plugins.grants.toml), the key and
// trusted_root files of a [plugin.signature], and the bundle of a local
// file `mcphost verify` checks. Each read is
// bounded by a limit the caller passes (the limits are documented in
// docs/configuration.md), so that a file no plugin should have been able
// to grow, or one shipped by mistake (a 1 GiB sparse file), costs a
// refusal and not the server's memory.
//
// It owns: opening a file beneath its directory with [os.Root] (no
// symbolic link, and no "..", leads out of it: [EscapeError]), refusing
// what is not a regular file, checking the size the opened file reports
// and the number of directory entries before reading anything
// ([LimitError]), and reading with a limit all the same, so that a file
// that grows while it is read is refused too.
//
// It ignores: what a file means (its callers parse it), who may write it
// (package plugins/config keeps plugins' mounts off the operator's files),
// and watching for changes (package plugins/watch).
package opfile
