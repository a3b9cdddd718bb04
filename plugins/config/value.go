package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mcphost/mcphost/sandbox/limits"
)

// Memory and size limits of a configuration.
const (
	pageSize       = 64 << 10              // a Wasm page
	maxMemoryPages = limits.MaxMemoryPages // 4 GiB: wazero panics above this
	maxMessage     = 1 << 30
	maxInstances   = 1024
	maxPageSize    = 100000
)

var byteUnits = map[string]int64{
	"": 1, "b": 1,
	"k": 1000, "kb": 1000, "ki": 1 << 10, "kib": 1 << 10,
	"m": 1000 * 1000, "mb": 1000 * 1000, "mi": 1 << 20, "mib": 1 << 20,
	"g": 1000 * 1000 * 1000, "gb": 1000 * 1000 * 1000, "gi": 1 << 30, "gib": 1 << 30,
	"t": 1000 * 1000 * 1000 * 1000, "tb": 1000 * 1000 * 1000 * 1000, "ti": 1 << 40, "tib": 1 << 40,
}

// ParseBytes reads a size such as "64MiB", "100 MB", "4GiB" or "65536": a
// non-negative integer and an optional unit, case-insensitive. KB, MB, GB
// and TB are powers of 1000; KiB, MiB, GiB and TiB powers of 1024.
func ParseBytes(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && '0' <= t[i] && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("invalid size %q: want an integer and an optional unit (B, KB, KiB, MB, MiB, GB, GiB)", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	unit, ok := byteUnits[strings.ToLower(strings.TrimSpace(t[i:]))]
	if !ok {
		return 0, fmt.Errorf("invalid size %q: unknown unit %q (want B, KB, KiB, MB, MiB, GB or GiB)", s, strings.TrimSpace(t[i:]))
	}
	if n > math.MaxInt64/unit {
		return 0, fmt.Errorf("invalid size %q: too large", s)
	}
	return n * unit, nil
}

// bytesToPages rounds a byte count up to whole 64 KiB pages.
func bytesToPages(n int64) int64 {
	return (n + pageSize - 1) / pageSize
}

// tomlType names a decoded TOML value's type for messages.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case int64:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case []map[string]any:
		return "array of tables"
	case map[string]any:
		return "table"
	default:
		return "datetime"
	}
}

// editDistance is the Levenshtein distance, for "did you mean" hints.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Suggest returns the name in known closest to name (case aside), or ""
// when none is within two edits: the "did you mean" of config keys, and
// of the tool, prompt, resource and command names other packages check.
func Suggest(name string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(name), strings.ToLower(k)); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}
