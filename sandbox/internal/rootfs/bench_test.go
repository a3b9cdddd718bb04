package rootfs

import (
	"path/filepath"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
)

// BenchmarkOpen opens and closes a file three directories down, through
// rootfs (one openat per component) and through wazero's DirFS (one open
// of the joined path, which does not confine symlinks), for comparison;
// rootfs-hiding-4 adds the check of four hidden files (FS.Hide).
func BenchmarkOpen(b *testing.B) {
	mnt := filepath.Join(tree(b), "mnt")
	ours, _ := newFS(b, mnt, true)
	// hiding: four hidden files, as a config with a policy and a
	// secrets_file gives (plugins.toml, the grants, policy, secrets).
	hiding, _ := newFS(b, mnt, true)
	var hidden []string
	for _, name := range []string{"plugins.toml", "plugins.grants.toml", "policy.yaml", "secrets.env"} {
		hidden = append(hidden, filepath.Join(filepath.Dir(mnt), name))
	}
	hiding.Hide(hidden)
	for _, bc := range []struct {
		name string
		fs   experimentalsys.FS
	}{{"rootfs", ours}, {"rootfs-hiding-4", hiding}, {"wazero-dirfs", sysfs.DirFS(mnt)}} {
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
