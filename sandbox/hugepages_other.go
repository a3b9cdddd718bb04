//go:build !linux

package sandbox

import "os"

// hugePage is the size of a transparent huge page on x86-64 and arm64
// with 4 KiB base pages (hugepages_linux.go). Where pages differ the
// advice covers no whole huge page and the kernel ignores it.
const hugePage = 2 << 20

// adviseHuge does nothing where the kernel has no transparent huge pages
// to ask for (hugepages_linux.go).
func adviseHuge([]byte) {}

// readLarge is os.ReadFile, with a free that does nothing
// (hugepages_linux.go).
func readLarge(file string) ([]byte, func(), error) {
	b, err := os.ReadFile(file)
	return b, func() {}, err
}

// mapLarge is make, with a free that does nothing (hugepages_linux.go).
func mapLarge(n int) ([]byte, func(), error) { return make([]byte, n), func() {}, nil }
