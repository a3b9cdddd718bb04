//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package source

import (
	"errors"
	"os"
	"syscall"
)

// lease opens file and takes a shared lock on it, held until the file is
// closed (or the process exits).
func lease(file string) (*os.File, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// removeUnlessInUse removes file (or a directory and everything below
// it: a leftover) unless someone holds a lease on it: it takes an
// exclusive lock first, which fails while any shared lock (from any
// process) is held.
func removeUnlessInUse(file string) (bool, error) {
	f, err := os.Open(file)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false, nil
		}
		return false, err
	}
	if err := os.RemoveAll(file); err != nil {
		return false, err
	}
	return true, nil
}
