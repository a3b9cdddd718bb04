// Command files is an mcphost plugin that serves the files of one
// directory: as MCP resources (listed, readable, with a URI template), as
// tools (list_dir, read_file, and write_file when enabled), and through a
// summarize_file prompt whose path argument completes from the listing.
//
// The directory is the guest path in config key "root" (default /data);
// the host mounts a real directory there through allowed_paths. The
// plugin refuses every path that leaves it, symlinks included.
package main
