package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/source"
)

// cacheRoot is the directory of every mcphost cache; no plugin may mount
// it writable (config's guard).
func cacheRoot() string { return config.CacheRoot() }

// cacheDirs are the caches `mcphost cache` reports and prunes: the
// sandbox's compiled code, Go builds, downloads (url and oci sources) and
// the plugins' lists that warm starts serve before compiling (removing
// one costs only a compile at the next start).
func cacheDirs() []string {
	root := cacheRoot()
	return []string{filepath.Join(root, "wazero"), filepath.Join(root, "gobuild"), filepath.Join(root, "download"), listCacheDir()}
}

const cacheUsage = `usage: mcphost cache size [--json]
       mcphost cache prune [--max SIZE]

size   prints what each cache (compiled code, Go builds, downloads, plugin
       lists) holds, and the leftovers of writes cut short (a build or a
       download killed halfway)
prune  removes those leftovers (unless written in the last minute, or a
       build in progress), then least recently used entries until the
       caches hold at most SIZE together (default: the cap serve applies,
       1GiB; 0 empties them). Entries a running mcphost loaded its plugins
       from are kept.
`

// Leftovers (see source.RemoveLeftovers) that `cache prune` and serve's
// start-up remove: prune takes what nothing wrote to for a minute, which
// no write in progress is (a build holds a lock besides); serve, which
// runs beside other mcphost processes unasked, only what is an hour old.
const (
	pruneLeftoverAge = time.Minute
	serveLeftoverAge = time.Hour
)

// removeLeftovers removes what crashed or killed writes left in the
// caches an hour ago or more, at serve's start.
func removeLeftovers(log *slog.Logger) {
	res, err := source.RemoveLeftovers(cacheDirs(), serveLeftoverAge)
	switch {
	case err != nil:
		log.Warn("cache leftovers not removed", "err", err)
	case res.Removed > 0:
		log.Info("cache leftovers removed", "removed", res.Removed, "freed", res.Freed)
	}
}

func cmdCache(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs, err := newGroupFlags("cache", cacheUsage, args, stdout, stderr)
	if err != nil {
		return err
	}
	switch args[0] {
	case "size":
		asJSON := fs.Bool("json", false, "print JSON")
		if err := fs.parse(args[1:]); err != nil {
			return err
		}
		return cacheSize(stdout, *asJSON)
	case "prune":
		max := fs.String("max", fmt.Sprint(source.DefaultCacheMax), "size to prune down to, such as 500MiB (0 empties the caches)")
		if err := fs.parse(args[1:]); err != nil {
			return err
		}
		n, err := config.ParseBytes(*max)
		if err != nil {
			return fmt.Errorf("--max %q: %w", *max, err)
		}
		lres, err := source.RemoveLeftovers(cacheDirs(), pruneLeftoverAge)
		if err != nil {
			return err
		}
		res, err := source.PruneCache(cacheDirs(), n)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed %d entries (%s)", res.Removed, human(res.Freed))
		if lres.Removed > 0 {
			fmt.Fprintf(stdout, " and %d leftovers (%s)", lres.Removed, human(lres.Freed))
		}
		fmt.Fprintf(stdout, ", %s left", human(res.Left))
		if res.InUse > 0 {
			fmt.Fprintf(stdout, ", %d entries kept because they are in use", res.InUse)
		}
		fmt.Fprintln(stdout)
		return nil
	}
	fmt.Fprint(stderr, cacheUsage)
	return errUsage
}

func cacheSize(stdout io.Writer, asJSON bool) error {
	use, err := source.CacheUsage(cacheDirs())
	if err != nil {
		return err
	}
	var total, leftBytes int64
	var left int
	for _, u := range use {
		total += u.Bytes + u.LeftoverBytes
		left += u.Leftovers
		leftBytes += u.LeftoverBytes
	}
	if asJSON {
		type dir struct {
			Name          string `json:"name"`
			Dir           string `json:"dir"`
			Files         int    `json:"files"`
			Bytes         int64  `json:"bytes"`
			Leftovers     int    `json:"leftovers"`
			LeftoverBytes int64  `json:"leftoverBytes"`
		}
		out := struct {
			Dirs  []dir `json:"dirs"`
			Bytes int64 `json:"bytes"`
			Max   int64 `json:"max"`
		}{Bytes: total, Max: source.DefaultCacheMax}
		for _, u := range use {
			out.Dirs = append(out.Dirs, dir{filepath.Base(u.Dir), u.Dir, u.Files, u.Bytes, u.Leftovers, u.LeftoverBytes})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	for _, u := range use {
		fmt.Fprintf(stdout, "%-9s %10s %6d files  %s\n", filepath.Base(u.Dir), human(u.Bytes), u.Files, u.Dir)
	}
	if left > 0 {
		fmt.Fprintf(stdout, "%-9s %10s %6d files  (writes cut short; mcphost cache prune removes them)\n", "leftovers", human(leftBytes), left)
	}
	fmt.Fprintf(stdout, "%-9s %10s (cap %s)\n", "total", human(total), human(source.DefaultCacheMax))
	return nil
}

// human formats a byte count with a binary unit.
func human(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
