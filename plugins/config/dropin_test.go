package config

import (
	"strings"
	"testing"
)

// FuzzDropInName checks that any file name becomes a valid plugin name or
// "" (which LoadConfig reports), and that valid names are kept as they are.
func FuzzDropInName(f *testing.F) {
	for _, s := range []string{"hash", "my plugin", "_x", "--", "héllo", strings.Repeat("z", 40)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, base string) {
		got := dropInName(base)
		if got != "" && !ValidName(got) {
			t.Errorf("dropInName(%q) = %q; want a valid plugin name or \"\"", base, got)
		}
		if ValidName(base) && got != base {
			t.Errorf("dropInName(%q) = %q; want a valid name unchanged", base, got)
		}
	})
}
