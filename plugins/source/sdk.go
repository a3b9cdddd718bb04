package source

import (
	"bytes"
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
	if err := writeSDKFiles(tmp); err != nil {
		return "", fmt.Errorf("extract sdk: %w", err)
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

// writeSDKFiles writes the SDK module's files into dir.
func writeSDKFiles(dir string) error {
	for name, data := range mcphost.SDKFiles() {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// SDKCopyDir is where `mcphost new` writes a copy of the SDK into a Go
// plugin's directory, for its go.mod to replace github.com/mcphost/mcphost
// with: the plain go command, go vet and gopls then work there with no
// network and no published module. A dot directory: go's ./... patterns
// and the watcher leave it alone.
const SDKCopyDir = ".mcphost/sdk"

// sdkCopyStamp is the file that marks a directory as an SDK copy mcphost
// owns, and records the [mcphost.SDKHash] it was written from.
const sdkCopyStamp = "MCPHOST-SDK"

// WriteSDKCopy writes the SDK this binary carries into dir, a plugin's
// [SDKCopyDir], replacing what was there (all at once: the new copy is
// written beside it and renamed into place).
func WriteSDKCopy(dir string) error {
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("write sdk copy: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, ".sdk-")
	if err != nil {
		return fmt.Errorf("write sdk copy: %w", err)
	}
	defer os.RemoveAll(tmp)
	stamp := "The Go guest SDK of mcphost, written by mcphost and replaced by it when its own SDK\n" +
		"changes (on every build, validate, serve or mcphost go): do not edit.\n" + mcphost.SDKHash() + "\n"
	if err := writeSDKFiles(tmp); err != nil {
		return fmt.Errorf("write sdk copy: %w", err)
	}
	if err := os.WriteFile(filepath.Join(tmp, sdkCopyStamp), []byte(stamp), 0o644); err != nil {
		return fmt.Errorf("write sdk copy: %w", err)
	}
	old := tmp + ".old"
	if err := os.Rename(dir, old); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("write sdk copy: %w", err)
	}
	defer os.RemoveAll(old)
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("write sdk copy: %w", err)
	}
	return nil
}

// refreshSDKCopy rewrites the module's SDK copy when it was written from
// another SDK than this binary's (or is missing), and reports whether it
// did.
func refreshSDKCopy(mod *moduleInfo) (bool, error) {
	if mod.sdkCopy == "" {
		return false, nil
	}
	data, err := os.ReadFile(filepath.Join(mod.sdkCopy, sdkCopyStamp))
	if err == nil && bytes.HasSuffix(data, []byte(mcphost.SDKHash()+"\n")) {
		return false, nil
	}
	return true, WriteSDKCopy(mod.sdkCopy)
}
