package sandbox

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
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
// poll's version and this mcphost's build (its module version, or the
// VCS revision of an unmodified checkout). A build with neither (a
// modified checkout, a test binary) prepares at every load: its
// preparation may differ from the one that wrote the entry.

// preparedPrefix starts the name of a prepared module's entry.
const preparedPrefix = "prepared-"

// buildIdentity names this build's preparation, or "" when it has no
// stable name.
var buildIdentity = sync.OnceValue(func() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" && !strings.Contains(v, "+dirty") {
		return v
	}
	var rev string
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision":
			rev = s.Value
		case s.Key == "vcs.modified" && s.Value != "false":
			return ""
		}
	}
	return rev
})

// preparedID is the identity of prepared modules for a build named build
// ("" turns them off).
func preparedID(build string) string {
	if build == "" {
		return ""
	}
	return fmt.Sprintf("%s%d-%s.wasm", preparedPrefix, looppoll.Version, cachefile.Sum([]byte(build))[:16])
}

// isPrepared reports whether an entry's file name is a prepared module's.
func isPrepared(name string) bool { return strings.HasPrefix(name, preparedPrefix) }

// preparedKey carries, in a compile's context, the cache use whose
// prepared module it may read and write.
type preparedKey struct{}

func withPrepared(ctx context.Context, u *cacheUse) context.Context {
	return context.WithValue(ctx, preparedKey{}, u)
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
func (u *cacheUse) readPrepared(log *slog.Logger) []byte {
	if u == nil {
		return nil
	}
	file := filepath.Join(u.dir, u.c.prepared)
	code, err := os.ReadFile(file)
	if err != nil {
		return nil
	}
	if err := cachefile.Check(file, cachefile.Sum(code)); err != nil {
		_ = cachefile.Remove(file)
		log.Warn("prepared module failed its check: removed, preparing the module again", "file", file, "err", err)
		return nil
	}
	return code
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
