//go:build unix

package config

import (
	"os"
	"syscall"
)

// links returns how many hard links the regular file p has (0 when p is
// not one, or cannot be read).
func links(p string) uint64 {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}
