// Command escapeguest is a hostile plugin: its probe tool tries every known
// way out of an allowed_paths mount and reports, for each attempt, "ok:…"
// or the errno it got. Tests assert the report exactly.
//
// The mount at dir is expected to hold a.txt ("inside"), sub/b.txt, and an
// empty directory empty/; it may also hold the outward links the host
// planted (leak, rel, chain1 -> chain2 -> rel, etcdir, reldir) and the
// inward ones (in -> a.txt, indir -> sub). other is a second, writable,
// mount.
package main

import (
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"

	guest "github.com/mcphost/mcphost/sdk-guest"
)

func main() {}

// ProbeIn is the input of probe.
type ProbeIn struct {
	Dir    string `json:"dir" jsonschema:"the mount to attack"`
	Other  string `json:"other" jsonschema:"a second, writable mount"`
	Secret string `json:"secret" jsonschema:"host path of a file outside the mount"`
	RW     bool   `json:"rw,omitempty" jsonschema:"the mount is writable: write probes use fresh files"`
}

// FileIn is the input of read_file and write_file.
type FileIn struct {
	Path string `json:"path" jsonschema:"a guest path"`
	Data string `json:"data,omitempty" jsonschema:"what write_file writes over the file"`
}

// RaceIn is the input of race_open and race_swap.
type RaceIn struct {
	Dir string `json:"dir" jsonschema:"the mount holding the link called race"`
	N   int    `json:"n" jsonschema:"iterations"`
}

func init() {
	guest.AddTool(guest.Tool{Name: "probe", Description: "Tries every escape from a mount; reports each outcome."},
		func(_ *guest.Context, in ProbeIn) (*guest.Result, error) { return guest.JSON(probe(in)) })
	// What a plugin does with an operator's file it finds in a mount.
	guest.AddTool(guest.Tool{Name: "read_file", Description: "Reads path; reports ok:content or the errno."},
		func(_ *guest.Context, in FileIn) (*guest.Result, error) { return guest.TextResult(read(in.Path)), nil })
	guest.AddTool(guest.Tool{Name: "write_file", Description: "Writes data over path; reports ok or the errno."},
		func(_ *guest.Context, in FileIn) (*guest.Result, error) {
			return guest.TextResult(result("", os.WriteFile(in.Path, []byte(in.Data), 0o600))), nil
		})
	guest.AddTool(guest.Tool{Name: "race_open", Description: "Reads dir/race n times; counts inside, refused and leaked reads."},
		func(_ *guest.Context, in RaceIn) (*guest.Result, error) {
			counts := map[string]int{}
			for range in.N {
				b, err := os.ReadFile(in.Dir + "/race")
				switch {
				case err != nil:
					counts["refused:"+errno(err)]++
				case string(b) == "inside":
					counts["inside"]++
				default:
					counts["leak"]++
				}
			}
			return guest.JSON(counts)
		})
	guest.AddTool(guest.Tool{Name: "race_swap", Description: "Swaps dir/race n times between a.txt and an outward path."},
		func(_ *guest.Context, in RaceIn) (*guest.Result, error) {
			fails := 0
			for i := range in.N {
				target := "a.txt"
				if i%2 == 1 {
					target = "reldir/x.txt" // lexically inside, leads out
				}
				tmp := in.Dir + "/race.tmp"
				os.Remove(tmp)
				if os.Symlink(target, tmp) != nil || os.Rename(tmp, in.Dir+"/race") != nil {
					fails++
				}
			}
			return guest.JSON(map[string]int{"swaps": in.N - fails})
		})
}

// errno names the syscall error in err.
func errno(err error) string {
	var e syscall.Errno
	if !errors.As(err, &e) {
		return "other: " + err.Error()
	}
	for _, n := range []struct {
		e    syscall.Errno
		name string
	}{
		{syscall.EPERM, "EPERM"}, {syscall.EROFS, "EROFS"}, {syscall.EBADF, "EBADF"},
		{syscall.ENOENT, "ENOENT"}, {syscall.ENOTCAPABLE, "ENOTCAPABLE"}, {syscall.EACCES, "EACCES"},
		{syscall.ENOSYS, "ENOSYS"}, {syscall.EXDEV, "EXDEV"}, {syscall.ELOOP, "ELOOP"},
		{syscall.ENOTDIR, "ENOTDIR"}, {syscall.EISDIR, "EISDIR"}, {syscall.EEXIST, "EEXIST"},
		{syscall.EINVAL, "EINVAL"}, {syscall.ENOTEMPTY, "ENOTEMPTY"},
	} {
		if e == n.e {
			return n.name
		}
	}
	return "errno " + e.Error()
}

func result(s string, err error) string {
	if err != nil {
		return errno(err)
	}
	return "ok" + s
}

func read(p string) string {
	b, err := os.ReadFile(p)
	return result(":"+string(b), err)
}

func list(p string) string {
	ents, err := os.ReadDir(p)
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return result(":"+strings.Join(names, ","), err)
}

// rawOpen opens name relative to the directory descriptor of dir without
// Go's path cleaning, so ".." reaches the host as written.
func rawOpen(dir, name string) string {
	d, err := os.Open(dir)
	if err != nil {
		return errno(err)
	}
	defer d.Close()
	fd, err := syscall.Openat(int(d.Fd()), name, syscall.O_RDONLY, 0)
	if err == nil {
		syscall.Close(fd)
	}
	return result("", err)
}

// steps runs fs in order and reports the first failure, then read.
func steps(read func() string, fs ...func() error) string {
	for _, f := range fs {
		if err := f(); err != nil {
			return errno(err)
		}
	}
	return read()
}

func probe(in ProbeIn) map[string]string {
	d := in.Dir
	// victim returns a file the write probes may change: a fresh one on a
	// writable mount, a.txt on a read-only one (where it must survive).
	n := 0
	victim := func() string {
		if !in.RW {
			return d + "/a.txt"
		}
		n++
		p := d + "/victim" + string(rune('a'+n))
		os.WriteFile(p, []byte("victim"), 0o644)
		return p
	}
	emptyDir := func() string {
		if !in.RW {
			return d + "/empty"
		}
		p := d + "/gone"
		os.Mkdir(p, 0o755)
		return p
	}
	out := map[string]string{
		// In-mount reads.
		"read a.txt":             read(d + "/a.txt"),
		"read sub/../a.txt":      read(d + "/sub/../a.txt"),
		"readdir sub":            list(d + "/sub"),
		"read in (link inside)":  read(d + "/in"),
		"readdir indir (inside)": list(d + "/indir"),

		// Climbing out by name.
		"raw open ../secret":         rawOpen(d, "../secret.txt"),
		"raw open sub/../../secret":  rawOpen(d, "sub/../../secret.txt"),
		"raw open /etc/hostname":     rawOpen(d, "/etc/hostname"),
		"read dir/../secret":         read(d + "/../secret.txt"),
		"read absolute host path":    read(in.Secret),
		"read /etc/hostname":         read("/etc/hostname"),
		"raw open etcdir/../../sec…": rawOpen(d, "etcdir/../../secret.txt"),

		// Links planted by the host.
		"read leak (absolute)":      read(d + "/leak"),
		"read rel (relative)":       read(d + "/rel"),
		"read chain1 (chain)":       read(d + "/chain1"),
		"readdir etcdir (dir link)": list(d + "/etcdir"),
		"read reldir/x.txt":         read(d + "/reldir/x.txt"),
		"stat leak":                 result("", func() error { _, err := os.Stat(d + "/leak"); return err }()),
		"lstat leak":                result("", func() error { _, err := os.Lstat(d + "/leak"); return err }()),
		"readlink rel": func() string {
			t, err := os.Readlink(d + "/rel")
			return result(":"+t, err)
		}(),
	}

	// Links the guest makes.
	out["symlink relative out"] = steps(func() string { return read(d + "/g_rel") },
		func() error { return os.Symlink("../secret.txt", d+"/g_rel") })
	out["symlink deep out"] = steps(func() string { return read(d + "/sub/g_deep") },
		func() error { return os.Symlink("../../../../../../../../etc/hostname", d+"/sub/g_deep") })
	out["symlink absolute host path"] = steps(func() string { return read(d + "/g_abs") },
		func() error { return os.Symlink(in.Secret, d+"/g_abs") })
	out["symlink absolute guest path"] = steps(func() string { return read(d + "/g_absin") },
		func() error { return os.Symlink(d+"/a.txt", d+"/g_absin") })
	out["symlink inside"] = steps(func() string { return read(d + "/g_in") },
		func() error { return os.Symlink("a.txt", d+"/g_in") })
	out["symlink dir inside"] = steps(func() string { return list(d + "/g_dir") },
		func() error { return os.Symlink("sub", d+"/g_dir") })
	out["symlink chain out"] = steps(func() string { return read(d + "/g_c1") },
		func() error { return os.Symlink("g_c2", d+"/g_c1") },
		func() error { return os.Symlink("../secret.txt", d+"/g_c2") })
	out["symlink to outward link"] = steps(func() string { return read(d + "/g_c3") },
		func() error { return os.Symlink("rel", d+"/g_c3") })
	out["symlink into dir link"] = steps(func() string { return read(d + "/g_dl") },
		func() error { return os.Symlink("reldir/x.txt", d+"/g_dl") })
	out["link moved out of reach"] = steps(func() string { return read(d + "/n/l") },
		func() error { return os.MkdirAll(d+"/m/n", 0o755) },
		func() error { return os.Symlink("../../a.txt", d+"/m/n/l") },
		func() error { return os.Rename(d+"/m/n", d+"/n") })

	// Hard links and renames.
	out["hard link inside"] = steps(func() string { return read(d + "/g_h") },
		func() error { return os.Link(d+"/a.txt", d+"/g_h") })
	out["hard link of outward link"] = steps(func() string { return read(d + "/g_hl") },
		func() error { return os.Link(d+"/leak", d+"/g_hl") })
	out["hard link from dir link"] = steps(func() string { return read(d + "/g_h2") },
		func() error { return os.Link(d+"/etcdir/x.txt", d+"/g_h2") })
	out["hard link to other mount"] = steps(func() string { return read(in.Other + "/h") },
		func() error { return os.Link(d+"/a.txt", in.Other+"/h") })
	out["rename into dir link"] = steps(func() string { return "ok" },
		func() error { return os.Rename(victim(), d+"/reldir/stolen") })
	out["rename to other mount"] = steps(func() string { return "ok" },
		func() error { return os.Rename(victim(), in.Other+"/stolen") })
	out["rename up"] = steps(func() string { return "ok" },
		func() error { return os.Rename(victim(), d+"/../stolen") })

	// Writes (refused on a read-only mount).
	out["create"] = steps(func() string { return read(d + "/new.txt") },
		func() error { return os.WriteFile(d+"/new.txt", []byte("new"), 0o644) })
	out["open for write"] = steps(func() string { return "ok" }, func() error {
		f, err := os.OpenFile(victim(), os.O_WRONLY, 0)
		if err == nil {
			f.Close()
		}
		return err
	})
	out["truncate"] = steps(func() string { return "ok" }, func() error { return os.Truncate(victim(), 0) })
	out["unlink"] = steps(func() string { return "ok" }, func() error { return os.Remove(victim()) })
	out["rename inside"] = steps(func() string { return "ok" },
		func() error { return os.Rename(victim(), d+"/renamed") })
	out["mkdir"] = steps(func() string { return "ok" }, func() error { return os.Mkdir(d+"/newdir", 0o755) })
	out["rmdir"] = steps(func() string { return "ok" }, func() error { return os.Remove(emptyDir()) })
	out["set times"] = steps(func() string { return "ok" },
		func() error { return os.Chtimes(victim(), time.Unix(1, 0), time.Unix(1, 0)) })

	// Nothing from outside shows in a listing of the whole mount.
	ents, _ := os.ReadDir(d)
	out["readdir mount"] = "ok"
	if slices.ContainsFunc(ents, func(e os.DirEntry) bool { return e.Name() == "x.txt" || e.Name() == "secret.txt" }) {
		out["readdir mount"] = "LEAK"
	}
	return out
}
