package source

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mcphost/mcphost"
)

// extractSDK writes the SDK module the binary carries (package mcphost)
// into parent/<hash[:16]> unless it is there already, and returns that
// directory. The directory is written under a temporary name and renamed
// into place, so concurrent callers and crashes never leave a partial
// module; its content never changes once written, so builds may key on
// its path.
func extractSDK(parent string) (string, error) {
	dir := filepath.Join(parent, mcphost.SDKHash()[:16])
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", fmt.Errorf("extract sdk: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, ".sdk-")
	if err != nil {
		return "", fmt.Errorf("extract sdk: %w", err)
	}
	defer os.RemoveAll(tmp)
	for name, data := range mcphost.SDKFiles() {
		p := filepath.Join(tmp, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", fmt.Errorf("extract sdk: %w", err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return "", fmt.Errorf("extract sdk: %w", err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		// Another process won the race: its copy is identical.
		if _, serr := os.Stat(filepath.Join(dir, "go.mod")); serr == nil {
			return dir, nil
		}
		// A copy without its go.mod lost files to something outside
		// mcphost (a cache cleaner): replace it.
		if rerr := os.RemoveAll(dir); rerr != nil {
			return "", fmt.Errorf("extract sdk: %w", rerr)
		}
		if err := os.Rename(tmp, dir); err != nil {
			if _, serr := os.Stat(filepath.Join(dir, "go.mod")); serr == nil {
				return dir, nil
			}
			return "", fmt.Errorf("extract sdk: %w", err)
		}
	}
	return dir, nil
}
