package rootfs

import (
	"path/filepath"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
)

// BenchmarkOpen opens and closes a file three directories down, through
// rootfs (one openat per component) and through wazero's DirFS (one open
// of the joined path, which does not confine symlinks), for comparison.
func BenchmarkOpen(b *testing.B) {
	mnt := filepath.Join(tree(b), "mnt")
	ours, _ := newFS(b, mnt, true)
	for _, bc := range []struct {
		name string
		fs   experimentalsys.FS
	}{{"rootfs", ours}, {"wazero-dirfs", sysfs.DirFS(mnt)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f, e := bc.fs.OpenFile("sub/c/d.txt", experimentalsys.O_RDONLY, 0)
				if e != 0 {
					b.Fatal(e)
				}
				f.Close()
			}
		})
	}
}
