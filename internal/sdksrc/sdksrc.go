package sdksrc

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rogpeppe/go-internal/txtar"
)

//go:generate go test -run TestArchiveInSync -update

// ModulePath is the module the SDK's packages belong to.
const ModulePath = "github.com/mcphost/mcphost"

//go:embed sdk.txtar
var archive []byte

// Hash identifies this SDK's source: the SHA-256 (hex) of the archive.
func Hash() string {
	h := sha256.Sum256(archive)
	return hex.EncodeToString(h[:])
}

// Files returns the SDK module's files, by slash-separated path relative
// to the module root (go.mod, abi/abi.go, sdk-guest/guest.go, …).
func Files() map[string][]byte {
	a := txtar.Parse(archive)
	m := make(map[string][]byte, len(a.Files))
	for _, f := range a.Files {
		m[f.Name] = f.Data
	}
	return m
}

// Extract writes the SDK module into parent/<Hash()[:16]> unless it is
// there already, and returns that directory. The directory is written
// under a temporary name and renamed into place, so concurrent callers
// and crashes never leave a partial module; its content never changes
// once written, so builds may key on its path.
func Extract(parent string) (string, error) {
	dir := filepath.Join(parent, Hash()[:16])
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
	for name, data := range Files() {
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
