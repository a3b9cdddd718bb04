package sandbox

import (
	"fmt"
	"log/slog"

	"github.com/tetratelabs/wazero"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"

	"github.com/mcphost/mcphost/sandbox/internal/rootfs"
)

// mountFS returns the filesystem configuration of a module: each mount is
// a rootfs.FS, which resolves every guest path beneath its host directory
// (see package rootfs). Every runtime must take its FSConfig from here and
// never mount host directories itself. Escape attempts are logged as
// warnings with attribute plugin, rate-limited per call of mountFS. The
// mounts must have been normalised (absolute host paths, guest paths set).
// may are mounted after allowed, each behind a gate that refuses: only an
// instance's own configuration (instanceFSConfig) opens them to a call
// that a person allowed. It also returns the mounted filesystems, which
// instances mount again (instanceFSConfig).
func mountFS(allowed, may []Mount, hidden []string, log *slog.Logger, plugin string) (wazero.FSConfig, []mounted, error) {
	cfg := wazero.NewFSConfig()
	ms, err := openMounts(allowed, may, hidden, log, plugin)
	if err != nil {
		return nil, nil, err
	}
	for _, m := range ms {
		cfg = cfg.(sysfs.FSConfig).WithSysFSMount(m.with(closedGate, nil), m.guest)
	}
	return cfg, ms, nil
}

// openMounts opens each mount as a rootfs.FS, in order, allowed before
// may (whose mounts are gated), each hiding the host files hidden.
// Components take their preopens from here,
// as core modules take their FSConfig from mountFS.
func openMounts(allowed, may []Mount, hidden []string, log *slog.Logger, plugin string) ([]mounted, error) {
	if len(allowed)+len(may) == 0 {
		return nil, nil
	}
	w := rootfs.NewWarner(log, plugin, 0, 0)
	var out []mounted
	for i, list := range [][]Mount{allowed, may} {
		for _, m := range list {
			fs, err := rootfs.New(m.Host, m.Guest, m.ReadOnly, w)
			if err != nil {
				for _, o := range out {
					o.root.Close()
				}
				return nil, fmt.Errorf("allowed paths: %w", err)
			}
			fs.Hide(hidden)
			out = append(out, mounted{root: fs, guest: m.Guest, host: m.Host, readOnly: m.ReadOnly, gated: i == 1})
		}
	}
	return out, nil
}

// mounted is one filesystem openMounts opened, at guest path guest.
type mounted struct {
	root     *rootfs.FS
	guest    string
	host     string
	readOnly bool
	gated    bool // a may_request_paths mount
}

// with returns the mount as the guest sees it: behind gate when it is
// gated, with the files it opens held in h (revoked when the call ends).
func (m mounted) with(gate rootfs.Gate, h *rootfs.Handles) experimentalsys.FS {
	if m.gated {
		return m.root.WithGate(gate, h)
	}
	return m.root
}

// closedGate refuses every use of a gated mount outside a call.
func closedGate(bool) experimentalsys.Errno { return experimentalsys.EACCES }
