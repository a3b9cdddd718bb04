//go:build !unix

package config

// links returns 0: hard links are not counted on this system (see
// RATIONALE.md, "Why count hard links only on the files that decide?").
func links(string) uint64 { return 0 }
