// Package rootfs is the filesystem behind every allowed_paths mount: a
// wazero experimental/sys.FS that resolves each guest path inside one host
// directory with Go's [os.Root].
//
// It owns: resolving paths component by component beneath the mount
// (symlinks are followed only while they stay inside; absolute targets,
// ".." past the top and links through outward directories fail with EPERM),
// refusing the creation of symlinks whose target leaves the mount, making a
// read-only mount refuse every WASI call that writes (EROFS, or EBADF on a
// descriptor opened for reading), logging each escape attempt as a
// rate-limited warning ([Warner]), hiding the host files it is told to
// from every name inside the mount ([FS.Hide]: compared by identity, so
// symlinks and hard links do not get past it), and gating a mount ([Gated]: each
// operation on a path asks a [Gate] first, then runs confined as above; the
// files it opens are held in [Handles] until whoever ends the call
// revokes them).
//
// It ignores: which guest path a mount appears at and how mounts are
// chosen (package sandbox and plugins decide), Windows-specific link
// semantics, poll_oneoff readiness (regular files are always ready), and
// non-blocking I/O. It knows nothing about Extism. On filesystems whose
// directory entries carry no type, Go's ReadDir looks the type up by host
// path, so a racing link could reveal whether an outside entry of the same
// name is a file or a directory (its type only, never its content).
//
// Because os.Root opens every component relative to the previous one's
// descriptor and reads symlinks itself, a link swapped between two calls
// can change what a path names, never where it may lead: there is no
// stat-then-open step to race.
package rootfs
