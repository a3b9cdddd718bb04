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
	if len(mounts) == 0 {
		return cfg, nil
	}
	w := rootfs.NewWarner(log, plugin, 0, 0)
	for _, m := range mounts {
		fs, err := rootfs.New(m.Host, m.Guest, m.ReadOnly, w)
		if err != nil {
			return nil, fmt.Errorf("allowed paths: %w", err)
		}
		cfg = cfg.(sysfs.FSConfig).WithSysFSMount(fs, m.Guest)
	}
	return cfg, nil
}
