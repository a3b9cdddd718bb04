package sandbox

import (
	"fmt"
	iofs "io/fs"
	"log/slog"
	"path"

	"github.com/tetratelabs/wazero"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"go.opentelemetry.io/otel/attribute"

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

// instanceFSConfig mounts ms again for one instance: gated mounts behind
// the instance's gate (instance.gate), and each behind a tracedFS that
// gives every file open of inst's calls a span when they are traced.
func instanceFSConfig(ms []mounted, inst *instance) wazero.FSConfig {
	cfg := wazero.NewFSConfig()
	for _, m := range ms {
		cfg = cfg.(sysfs.FSConfig).WithSysFSMount(tracedFS{FS: m.with(inst.gate(m.host), &inst.handles), inst: inst, guest: m.guest}, m.guest)
	}
	return cfg
}

// tracedFS is a mount whose opens are spans of the call being served.
// wazero's FS methods take no context, so the instance holds how to start
// a span in its current call (instance.begin).
type tracedFS struct {
	experimentalsys.FS
	inst  *instance
	guest string
}

func (f tracedFS) OpenFile(p string, flag experimentalsys.Oflag, perm iofs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	start := f.inst.spanner()
	if start == nil {
		return f.FS.OpenFile(p, flag, perm)
	}
	write := flag&(experimentalsys.O_RDWR|experimentalsys.O_WRONLY|experimentalsys.O_CREAT|experimentalsys.O_TRUNC|experimentalsys.O_APPEND) != 0
	sp := start("open", attribute.String("file.path", path.Join(f.guest, p)), attribute.Bool("mcphost.fs.write", write))
	file, errno := f.FS.OpenFile(p, flag, perm)
	var err error
	if errno != 0 {
		sp.SetAttributes(attribute.String("error.type", errno.Error()))
		err = errno
	}
	endSpan(sp, err)
	return file, errno
}
