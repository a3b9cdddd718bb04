package opfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Limits of the files the operator names. The callers pick the one for
// what they read; skill directories and [plugin.ui] pages have theirs
// where the key is read (plugins.MaxSkillBytes, config.MaxUIPage).
const (
	// MaxPolicy bounds a wassette policy file: a few hundred lines of
	// YAML are plenty; a megabyte of it is a mistake.
	MaxPolicy = 1 << 20
	// MaxSecrets bounds a secrets_file of NAME=value lines.
	MaxSecrets = 1 << 20
	// MaxGrants bounds plugins.grants.toml: some 50,000 grants.
	MaxGrants = 16 << 20
)

// LimitError is a file, or a directory, over the limit its reader set.
// It names the file and the limit; callers fail the plugin (or the
// config) that named it.
type LimitError struct {
	File string // the file or directory over its limit
	// Entries is set when a directory holds more entries than Limit;
	// otherwise Size is bytes.
	Entries bool
	Size    int64 // what the file holds (at least, when it grew while read)
	Limit   int64
	// Under is the directory whose files together went over Limit, when
	// the limit is on a whole tree ([ReadTree]).
	Under string
}

func (e *LimitError) Error() string {
	switch {
	case e.Entries:
		return fmt.Sprintf("%s holds more than %d directory entries (hidden ones and subdirectories count), the limit mcphost reads", e.File, e.Limit)
	case e.Under != "":
		return fmt.Sprintf("%s is %d bytes, which takes the files under %s past their limit of %s", e.File, e.Size, e.Under, Size(e.Limit))
	}
	return fmt.Sprintf("%s is %d bytes, more than the limit of %s", e.File, e.Size, Size(e.Limit))
}

// EscapeError is a path that leads out of the directory it is read
// beneath, through a symbolic link or "..".
type EscapeError struct {
	File string
	Dir  string
}

func (e *EscapeError) Error() string {
	return fmt.Sprintf("%s leads outside %s (a symbolic link or \"..\"): mcphost reads this file only inside its directory; copy the file there instead of linking it", e.File, e.Dir)
}

// Size spells n bytes for a message: "16 MiB (16777216 bytes)".
func Size(n int64) string {
	for _, u := range []struct {
		unit  string
		shift uint
	}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s (%d bytes)", n>>u.shift, u.unit, n)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// Read reads file, beneath its own directory: a symbolic link may not
// lead out of it. It returns the opened file's information too (a
// caller may check its mode).
func Read(file string, max int64) ([]byte, fs.FileInfo, error) {
	return ReadIn(filepath.Dir(file), filepath.Base(file), max)
}

// ReadIn reads name, a slash-separated path local to dir, beneath dir: no
// element of it, and no link it passes, may lead out of dir.
func ReadIn(dir, name string, max int64) ([]byte, fs.FileInfo, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, nil, err
	}
	defer root.Close()
	return readAt(root, dir, filepath.FromSlash(name), max, "")
}

// readAt is every read of this package: name opened beneath root (whose
// path is dir), checked to be a regular file of at most max bytes, then
// read to at most max+1 bytes. under, when set, is the tree whose total
// max is what is left of ([ReadTree] sets the whole limit in the error).
func readAt(root *os.Root, dir, name string, max int64, under string) ([]byte, fs.FileInfo, error) {
	file := filepath.Join(dir, name)
	f, err := root.OpenFile(name, os.O_RDONLY|openFlags, 0)
	if err != nil {
		return nil, nil, openError(dir, file, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	limit := func(size int64) error {
		return &LimitError{File: file, Size: size, Limit: max, Under: under}
	}
	switch {
	case !fi.Mode().IsRegular():
		return nil, nil, fmt.Errorf("%s is not a regular file (%s)", file, fi.Mode().Type())
	case fi.Size() > max:
		return nil, nil, limit(fi.Size())
	}
	b := make([]byte, 0, fi.Size()+1)
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > max {
			return nil, nil, limit(int64(len(b)))
		}
		if errors.Is(err, io.EOF) {
			return b, fi, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", file, err)
		}
		if len(b) == cap(b) {
			// It grew since Stat: read on, still within max+1.
			b = slices.Grow(b, int(min(max+1-int64(len(b)), 64<<10)))
		}
	}
}

// openError says why file (beneath dir) did not open: an [EscapeError]
// when the file is there but only through a path that leaves dir.
func openError(dir, file string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
		if _, serr := os.Stat(file); serr == nil {
			return &EscapeError{File: file, Dir: dir}
		}
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: "open", Path: file, Err: pe.Err}
	}
	return err
}

// TreeLimits bound a [ReadTree].
type TreeLimits struct {
	Bytes   int64 // all the files read, together
	Entries int   // directory entries listed, of any kind, hidden ones included
}

// File is one file a [ReadTree] read.
type File struct {
	Path string // slash-separated, relative to the tree's directory
	Data []byte
}

// ReadTree reads every regular file below dir, beneath dir (no link
// leads out), leaving out hidden files and directories (".name") and
// anything that is not a regular file or a directory. Each directory's
// entries are counted as they are listed, and each file's size is
// checked against what is left of lim.Bytes before it is read. Files are
// in path order.
func ReadTree(dir string, lim TreeLimits) ([]File, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	t := tree{root: root, dir: dir, lim: lim, left: lim.Bytes}
	if err := t.walk("."); err != nil {
		return nil, err
	}
	return t.files, nil
}

type tree struct {
	root    *os.Root
	dir     string
	lim     TreeLimits
	entries int
	left    int64
	files   []File
}

func (t *tree) walk(rel string) error {
	d, err := t.root.Open(rel)
	if err != nil {
		return openError(t.dir, filepath.Join(t.dir, rel), err)
	}
	// Read no more entries than the limit allows, plus one to tell.
	var list []fs.DirEntry
	for {
		more, err := d.ReadDir(t.lim.Entries - t.entries - len(list) + 1)
		list = append(list, more...)
		if t.entries+len(list) > t.lim.Entries {
			d.Close()
			return &LimitError{File: t.dir, Entries: true, Size: int64(t.entries + len(list)), Limit: int64(t.lim.Entries)}
		}
		if errors.Is(err, io.EOF) || err == nil && len(more) == 0 {
			break
		}
		if err != nil {
			d.Close()
			return fmt.Errorf("list %s: %w", filepath.Join(t.dir, rel), err)
		}
	}
	d.Close()
	t.entries += len(list)
	slices.SortFunc(list, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range list {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := path.Join(filepath.ToSlash(rel), e.Name())
		switch {
		case e.IsDir():
			if err := t.walk(p); err != nil {
				return err
			}
		case e.Type().IsRegular():
			b, _, err := readAt(t.root, t.dir, filepath.FromSlash(p), t.left, t.dir)
			if le := (*LimitError)(nil); errors.As(err, &le) {
				le.Limit = t.lim.Bytes // the tree's, not what was left of it
			}
			if err != nil {
				return err
			}
			t.left -= int64(len(b))
			t.files = append(t.files, File{Path: p, Data: b})
		}
	}
	return nil
}
