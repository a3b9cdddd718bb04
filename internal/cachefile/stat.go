package cachefile

import "time"

// File metadata as a witness of content. A file whose size, modification
// and change times, inode and device are what they were when it was
// hashed still holds what was hashed, with one exception: a rewrite
// within the file system's timestamp granularity of the moment its
// metadata was taken. A rewrite in place gets a new change time, which
// nobody can set back (touch sets only the modification time). So
// metadata is kept as a witness only for a file whose times were older
// than [RacyWindow] ([FineRacyWindow] where times have fractions of a
// second) when it was hashed, as git does for its index; the rest are
// hashed again next time. The file digest cache (plugins/filedigest.go)
// and [VerifyStat] use it.

// RacyWindow: a file changed this recently when it was hashed may change
// again without its times showing it (file systems that keep seconds or
// two-second times included). A file whose times have a fraction of a
// second is on a file system that keeps them finer, whose clock ticks
// every few milliseconds: FineRacyWindow is enough there.
const (
	RacyWindow     = 2 * time.Second
	FineRacyWindow = 100 * time.Millisecond
)

// RacyWindows are the windows a cache uses: [Racy], or shorter ones in
// tests.
type RacyWindows struct{ Coarse, Fine time.Duration }

// Racy are the windows of [RacyWindow] and [FineRacyWindow].
var Racy = RacyWindows{RacyWindow, FineRacyWindow}

// Racy reports whether a file whose metadata is st changed too recently,
// at now, for its times to show its next change.
func (w RacyWindows) Racy(st Stat, now time.Time) bool { return w.Until(st, now) > 0 }

// Until is how long after now a file whose metadata is st stops being
// racy (0: it is not).
func (w RacyWindows) Until(st Stat, now time.Time) time.Duration {
	window := w.Coarse
	if st.Mod%int64(time.Second) != 0 || st.Change%int64(time.Second) != 0 {
		window = min(window, w.Fine)
	}
	return max(0, time.Duration(max(st.Mod, st.Change)+int64(window)-now.UnixNano()))
}

// Stat is what a file's metadata says of its content; the zero value
// means none is known (another OS, or no metadata).
type Stat struct {
	Size   int64  `json:"size"`
	Mod    int64  `json:"mod"`    // modification time, ns since the epoch
	Change int64  `json:"change"` // change time (ctime), ns since the epoch
	Inode  uint64 `json:"inode"`
	Device uint64 `json:"device"`
}
