package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/source"
)

// cacheRoot is the directory of every mcphost cache.
func cacheRoot() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "mcphost")
}

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
       lists) holds
prune  removes least recently used entries until the caches hold at most
       SIZE together (default: the cap serve applies, 1GiB; 0 empties
       them). Entries a running mcphost loaded its plugins from are kept.
`

func cmdCache(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, cacheUsage)
		return errUsage
	}
	if wantsHelp(args) {
		fmt.Fprint(stdout, cacheUsage)
		return flag.ErrHelp
	}
	fs := newFlags("cache "+args[0], stdout, stderr)
	fs.more = cacheUsage
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
		res, err := source.PruneCache(cacheDirs(), n)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "removed %d entries (%s), %s left", res.Removed, human(res.Freed), human(res.Left))
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
	var total int64
	for _, u := range use {
		total += u.Bytes
	}
	if asJSON {
		type dir struct {
			Name  string `json:"name"`
			Dir   string `json:"dir"`
			Files int    `json:"files"`
			Bytes int64  `json:"bytes"`
		}
		out := struct {
			Dirs  []dir `json:"dirs"`
			Bytes int64 `json:"bytes"`
			Max   int64 `json:"max"`
		}{Bytes: total, Max: source.DefaultCacheMax}
		for _, u := range use {
			out.Dirs = append(out.Dirs, dir{filepath.Base(u.Dir), u.Dir, u.Files, u.Bytes})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	for _, u := range use {
		fmt.Fprintf(stdout, "%-9s %10s %6d files  %s\n", filepath.Base(u.Dir), human(u.Bytes), u.Files, u.Dir)
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
