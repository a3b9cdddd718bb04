package sandbox

import (
	"context"
	"debug/elf"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mcphost/mcphost/internal/cachefile"
	"github.com/mcphost/mcphost/sandbox/internal/looppoll"
)

// The prepared module. What the native runtime compiles is not the
// guest's bytes but those bytes with their data segments merged
// (wasmbin.MergeData) and every loop polling (looppoll): ≈ 80 ms of CPU
// for a 4 MB Go guest at every load, its compiled code cached or not, a
// third of a warm first call. A module compiled through the compile cache
// keeps those bytes beside its compiled code, as one more entry of its
// directory (recorded and checked like the others), and a later load
// compiles them as read.
//
// The entry's name carries the identity of the preparation: the loop
// poll's version and the Go build ID of the executable, which changes
// with any change to the code that prepares. Only an Engine with
// [EngineOptions].KeepPrepared keeps prepared modules (serve), and only
// when its executable has a build ID: another build's rewriter may differ
// from the one that wrote an entry.

// executableBuildID returns the Go build ID of the running executable, or
// "" when it cannot be read.
var executableBuildID = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if f, err := elf.Open(exe); err == nil {
		defer f.Close()
		if sec := f.Section(".note.go.buildid"); sec != nil {
			// A note: name size, descriptor size, type, "Go\x00\x00", the ID.
			if b, err := sec.Data(); err == nil && len(b) > 16 && string(b[12:16]) == "Go\x00\x00" {
				return strings.TrimRight(string(b[16:]), "\x00") // padded to 4 bytes
			}
		}
		return ""
	}
	// Other formats carry it as text near the start.
	f, err := os.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 32<<10)
	n, _ := io.ReadFull(f, head)
	const marker = "\xff Go build ID: \""
	_, id, ok := strings.Cut(string(head[:n]), marker)
	if id, _, ok2 := strings.Cut(id, "\""); ok && ok2 {
		return id
	}
	return ""
})

// preparedID names the prepared modules of a build whose Go build ID is
// build ("" keeps none).
func preparedID(build string) string {
	if build == "" {
		return ""
	}
	return fmt.Sprintf("%s%d-%s.wasm", preparedPrefix, looppoll.Version, cachefile.Sum([]byte(build))[:16])
}

// preparedKey carries, in a compile's context, the cache use whose
// prepared module it may read and write.
type preparedKey struct{}

func withPrepared(ctx context.Context, u *cacheUse) context.Context {
	return context.WithValue(ctx, preparedKey{}, u)
}

// keptKey carries, in a load's context, the prepared module LoadKept read
// and the cache use it came from.
type keptKey struct{}

type kept struct {
	code []byte
	use  *cacheUse
}

func withKept(ctx context.Context, code []byte, use *cacheUse) context.Context {
	return context.WithValue(ctx, keptKey{}, kept{code, use})
}

func keptIn(ctx context.Context) (kept, bool) {
	k, ok := ctx.Value(keptKey{}).(kept)
	return k, ok
}

// preparedIn returns the cache use of ctx when it keeps prepared modules,
// or nil.
func preparedIn(ctx context.Context) *cacheUse {
	u, _ := ctx.Value(preparedKey{}).(*cacheUse)
	if u == nil || u.cache == nil || u.c.prepared == "" {
		return nil
	}
	return u
}

// readPrepared returns the prepared module u holds, checked against its
// record, or nil; one that fails its check is removed, which is said.
// The bytes are read outside the Go heap (readLarge) and free releases
// them: the caller calls it once the bytes are compiled (wazero copies
// what it keeps of a module while decoding it) and never touches them
// again. free is never nil.
func (u *cacheUse) readPrepared(log *slog.Logger) (code []byte, free func()) {
	if u == nil {
		return nil, func() {}
	}
	file := filepath.Join(u.dir, u.c.prepared)
	code, free, err := readLarge(file)
	if err != nil {
		return nil, func() {}
	}
	if err := cachefile.Check(file, cachefile.Sum(code)); err != nil {
		free()
		_ = cachefile.Remove(file)
		log.Warn("prepared module failed its check: removed, preparing the module again", "file", file, "err", err)
		return nil, func() {}
	}
	return code, free
}

// savePrepared keeps code, the module prepared for compiling, for the
// next load; a failure is said, and costs that load the preparation.
func (u *cacheUse) savePrepared(code []byte, log *slog.Logger) {
	if u == nil {
		return
	}
	file := filepath.Join(u.dir, u.c.prepared)
	err := os.MkdirAll(u.dir, 0o700)
	if err == nil {
		if err = cachefile.Record(file, cachefile.Sum(code)); err == nil {
			err = cachefile.WriteFile(file, code)
		}
	}
	if err != nil {
		log.Warn("prepared module not cached: the next load prepares it again", "file", file, "err", err)
	}
}
