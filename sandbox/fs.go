package sandbox

import (
	"fmt"
	iofs "io/fs"
	"log/slog"
	"path"

	"github.com/tetratelabs/wazero"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"

	"github.com/mcphost/mcphost/sandbox/rootfs"
)

// mountFS returns the filesystem configuration of a module: each mount is
// a rootfs.FS, which resolves every guest path beneath its host directory
// (see package rootfs). Every runtime must take its FSConfig from here and
// never mount host directories itself. Escape attempts are logged as
// warnings with attribute plugin, rate-limited per call of mountFS. The
// mounts must have been normalised (absolute host paths, guest paths set).
// It also returns the mounted filesystems, for instances whose file opens
// are traced (tracedFSConfig).
func mountFS(mounts []Mount, log *slog.Logger, plugin string) (wazero.FSConfig, []mounted, error) {
	cfg := wazero.NewFSConfig()
	roots, err := openMounts(mounts, log, plugin)
	if err != nil {
		return nil, nil, err
	}
	var ms []mounted
	for i, fs := range roots {
		cfg = cfg.(sysfs.FSConfig).WithSysFSMount(fs, mounts[i].Guest)
		ms = append(ms, mounted{fs, mounts[i].Guest})
	}
	return cfg, ms, nil
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

// mounted is one filesystem mountFS mounted, at guest path guest.
type mounted struct {
	fs    experimentalsys.FS
	guest string
}

// tracedFSConfig mounts ms again for one instance, each behind a tracedFS
// that gives every file open of inst's calls a span.
func tracedFSConfig(ms []mounted, inst *instance) wazero.FSConfig {
	cfg := wazero.NewFSConfig()
	for _, m := range ms {
		cfg = cfg.(sysfs.FSConfig).WithSysFSMount(tracedFS{FS: m.fs, inst: inst, guest: m.guest}, m.guest)
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
	sp := start("open", slog.String("file.path", path.Join(f.guest, p)), slog.Bool("mcphost.fs.write", write))
	file, errno := f.FS.OpenFile(p, flag, perm)
	var err error
	if errno != 0 {
		sp.SetAttrs(slog.String("error.type", errno.Error()))
		err = errno
	}
	sp.End(err)
	return file, errno
}
