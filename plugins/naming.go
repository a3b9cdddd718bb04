package plugins

import (
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strconv"
)

// MaxToolName is the longest tool name clients accept
// (^[a-zA-Z0-9_-]{1,64}$).
const MaxToolName = 64

// ToolName returns the exposed name of a plugin's tool before collisions
// are resolved: prefix+original with every character outside
// [a-zA-Z0-9_-] replaced by '_'. A result longer than [MaxToolName] is cut
// and ends in '_' and 8 hex digits of the SHA-256 of prefix+original, so
// that long names that share a beginning stay distinct.
func ToolName(prefix, original string) string {
	s := prefix + original
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if validToolRune(r) {
			b = append(b, byte(r))
		} else {
			b = append(b, '_')
		}
	}
	if len(b) == 0 {
		return "_"
	}
	if len(b) > MaxToolName {
		sum := sha256.Sum256([]byte(s))
		b = append(b[:MaxToolName-9], '_')
		b = append(b, hex.EncodeToString(sum[:4])...)
	}
	return string(b)
}

func validToolRune(r rune) bool {
	return r == '_' || r == '-' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
}

// ValidToolName reports whether s matches ^[a-zA-Z0-9_-]{1,64}$.
func ValidToolName(s string) bool {
	if len(s) == 0 || len(s) > MaxToolName {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !validToolRune(rune(s[i])) {
			return false
		}
	}
	return true
}

// nameReq is one item to name: its plugin and its wanted name.
type nameReq struct {
	plugin string
	want   string
}

// assignNames gives every request a name unique among them, in order: the
// first request for a name keeps it, later ones get "_2", "_3", … (cut to
// limit characters when limit > 0). Each renaming is logged as a warning
// naming both plugins.
func assignNames(log *slog.Logger, kind string, reqs []nameReq, limit int) []string {
	owner := make(map[string]string, len(reqs))
	out := make([]string, len(reqs))
	for i, r := range reqs {
		name := r.want
		for n := 2; ; n++ {
			if _, taken := owner[name]; !taken {
				break
			}
			name = withSuffix(r.want, n, limit)
		}
		if name != r.want {
			log.Warn(kind+" name collision", kind, r.want, "plugin", r.plugin,
				"other", owner[r.want], "name", name)
		}
		owner[name] = r.plugin
		out[i] = name
	}
	return out
}

func withSuffix(name string, n, limit int) string {
	suffix := "_" + strconv.Itoa(n)
	if limit > 0 && len(name)+len(suffix) > limit {
		name = name[:limit-len(suffix)]
	}
	return name + suffix
}

// firstWins keeps the first of each key and logs the others as warnings:
// duplicate resource URIs and template URIs go to the first plugin in
// config order. A key that eligible (nil: all) marks false is already
// refused and claims nothing.
func firstWins(log *slog.Logger, kind string, keys []nameReq, eligible []bool) []bool {
	owner := make(map[string]string, len(keys))
	keep := make([]bool, len(keys))
	for i, k := range keys {
		if eligible != nil && !eligible[i] {
			continue
		}
		if other, dup := owner[k.want]; dup {
			log.Warn("duplicate "+kind, "uri", k.want, "plugin", k.plugin, "other", other)
			continue
		}
		owner[k.want] = k.plugin
		keep[i] = true
	}
	return keep
}
