package sandbox

import (
	"fmt"
	"log/slog"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental/sysfs"

	"github.com/mcphost/mcphost/sandbox/rootfs"
)

// mountFS returns the filesystem configuration of a module: each mount is
// a rootfs.FS, which resolves every guest path beneath its host directory
// (see package rootfs). Every runtime must take its FSConfig from here and
// never mount host directories itself. Escape attempts are logged as
// warnings with attribute plugin, rate-limited per call of mountFS. The
// mounts must have been normalised (absolute host paths, guest paths set).
func mountFS(mounts []Mount, log *slog.Logger, plugin string) (wazero.FSConfig, error) {
	cfg := wazero.NewFSConfig()
	roots, err := openMounts(mounts, log, plugin)
	if err != nil {
		return nil, err
	}
	for i, fs := range roots {
		cfg = cfg.(sysfs.FSConfig).WithSysFSMount(fs, mounts[i].Guest)
	}
	return cfg, nil
}

// openMounts opens each mount as a rootfs.FS, in order. Components take
// their preopens from here, as core modules take their FSConfig from
// mountFS.
func openMounts(mounts []Mount, log *slog.Logger, plugin string) ([]*rootfs.FS, error) {
	if len(mounts) == 0 {
		return nil, nil
	}
	w := rootfs.NewWarner(log, plugin, 0, 0)
	roots := make([]*rootfs.FS, len(mounts))
	for i, m := range mounts {
		fs, err := rootfs.New(m.Host, m.Guest, m.ReadOnly, w)
		if err != nil {
			return nil, fmt.Errorf("allowed paths: %w", err)
		}
		roots[i] = fs
	}
	return roots, nil
}
