//go:build !linux

package cachefile

// StatOf knows no change time here: metadata is never a witness (the file
// digest cache is off, and [VerifyStat] always hashes).
func StatOf(string) (Stat, bool) { return Stat{}, false }
