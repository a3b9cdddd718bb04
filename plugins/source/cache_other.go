//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package source

import "os"

// lease keeps file open. On Windows an open file cannot be removed, which
// is the lease; elsewhere (no flock) leases are best effort.
func lease(file string) (*os.File, error) { return os.Open(file) }

// removeUnlessInUse removes file (or a directory and everything below
// it); a failure because it is open elsewhere (Windows) counts as "in use".
func removeUnlessInUse(file string) (bool, error) {
	if _, err := os.Lstat(file); err != nil {
		return false, err
	}
	if err := os.RemoveAll(file); err != nil {
		return false, nil
	}
	return true, nil
}
