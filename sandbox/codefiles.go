package sandbox

import (
	"bufio"
	"crypto/sha256"
	"errors"
	"io"
	"reflect"
	"unsafe"

	"github.com/tetratelabs/wazero"
)

// wazeroFiles is the method set of the directory behind a wazero
// compilation cache (wazero's internal filecache.Cache, whose key type is
// an alias of [sha256.Size]byte).
type wazeroFiles interface {
	Get(key [sha256.Size]byte) (content io.ReadCloser, ok bool, err error)
	Add(key [sha256.Size]byte, content io.Reader) error
	Delete(key [sha256.Size]byte) error
}

// hugeCodeFiles is wazero's directory with one change: an entry is read
// through codeReader. wazero copies an entry's machine code (16 MB for a
// 4 MB Go guest) into a fresh mapping with read(2) and then checksums it,
// so every 4 KiB page of it faults, in the kernel and again in user mode,
// which on a virtual machine is most of a warm first call; in huge pages
// it faults a few times. Entries are written and removed by wazero's own
// code, so the layout stays wazero's.
type hugeCodeFiles struct{ wazeroFiles }

func (f hugeCodeFiles) Get(key [sha256.Size]byte) (io.ReadCloser, bool, error) {
	rc, ok, err := f.wazeroFiles.Get(key)
	if !ok || err != nil {
		return rc, ok, err
	}
	return newCodeReader(rc), true, nil
}

// codeReader reads an entry for wazero. Its first read of megabytes is
// the machine code, into the mapping wazero has just made and not yet
// touched, which it advises for huge pages (adviseHuge) before filling.
// It buffers the rest, which wazero reads 8 bytes at a time (an offset
// per function: thousands of read(2) calls otherwise), and every read is
// whole, as wazero's reads of the bare file were.
type codeReader struct {
	rc      io.ReadCloser
	br      *bufio.Reader
	advised bool
}

func newCodeReader(rc io.ReadCloser) *codeReader {
	return &codeReader{rc: rc, br: bufio.NewReaderSize(rc, 64<<10)}
}

func (r *codeReader) Read(p []byte) (int, error) {
	if !r.advised && len(p) >= 2*hugePage {
		r.advised = true
		adviseHuge(p)
	}
	n, err := io.ReadFull(r.br, p)
	if err == io.ErrUnexpectedEOF {
		err = io.EOF // a short read at the end, as the bare file's
	}
	return n, err
}

func (r *codeReader) Close() error { return r.rc.Close() }

// errNoCodeFiles: wazero's cache is not laid out as hookCodeFiles knows;
// TestHookCodeFiles fails on a wazero that changed it.
var errNoCodeFiles = errors.New("wazero's compilation cache has no directory field of the expected type")

// hookCodeFiles puts hugeCodeFiles in front of c's directory, before any
// runtime uses c. wazero offers no way to give a cache a directory of
// one's own, so this sets the unexported field its constructor fills;
// on any surprise it changes nothing and says so.
func hookCodeFiles(c wazero.CompilationCache) error {
	v := reflect.ValueOf(c)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return errNoCodeFiles
	}
	field := v.Elem().FieldByName("fileCache")
	if !field.IsValid() || field.Kind() != reflect.Interface || !field.CanAddr() {
		return errNoCodeFiles
	}
	field = reflect.NewAt(field.Type(), unsafe.Pointer(field.UnsafeAddr())).Elem()
	inner, ok := field.Interface().(wazeroFiles)
	hooked := reflect.ValueOf(hugeCodeFiles{inner})
	if !ok || inner == nil || !hooked.Type().AssignableTo(field.Type()) {
		return errNoCodeFiles
	}
	if _, already := inner.(hugeCodeFiles); !already {
		field.Set(hooked)
	}
	return nil
}
