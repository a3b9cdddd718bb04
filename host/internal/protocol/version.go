package protocol

import (
	"strings"
)

// Version is a negotiated protocol revision; later revisions compare greater.
type Version uint8

// The revisions mcphost serves, oldest first. The zero Version means none
// (before initialize).
const (
	V20241105 Version = iota + 1
	V20250326
	V20250618
	V20251125
	// V20260728 is the stateless era: no initialize, every request
	// carries its version and capabilities in _meta (host's stateless.go). It is
	// never negotiated by initialize.
	V20260728

	// Latest is the latest revision initialize negotiates.
	Latest = V20251125
	// Stateless is the revision served without a handshake.
	Stateless = V20260728
)

var versionNames = [...]string{
	V20241105: "2024-11-05",
	V20250326: "2025-03-26",
	V20250618: "2025-06-18",
	V20251125: "2025-11-25",
	V20260728: "2026-07-28",
}

// String returns the revision's name ("2025-11-25"), or "none".
func (v Version) String() string {
	if int(v) < len(versionNames) && v > 0 {
		return versionNames[v]
	}
	return "none"
}

// Negotiate answers a client's requested version: the same version when
// we support it, our latest otherwise (the client decides whether it can
// go on).
func Negotiate(requested string) Version {
	for v := V20241105; v <= Latest; v++ {
		if versionNames[v] == requested {
			return v
		}
	}
	return Latest
}

// Parse returns the revision named exactly s, among those initialize
// negotiates (Stateless is not one: its requests say so in _meta).
func Parse(s string) (Version, bool) {
	for v := V20241105; v <= Latest; v++ {
		if versionNames[v] == s {
			return v, true
		}
	}
	return 0, false
}

// SupportedList lists the revisions initialize negotiates, newest first
// and comma-separated, for error messages.
func SupportedList() string {
	names := make([]string, 0, Latest)
	for v := Latest; v >= V20241105; v-- {
		names = append(names, versionNames[v])
	}
	return strings.Join(names, ", ")
}
