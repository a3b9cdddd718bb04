package cachefile

import (
	"testing"
	"time"
)

// TestRacyWindows: a file changed within the window of when it is hashed
// gets no entry; times with fractions of a second get the fine window.
func TestRacyWindows(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	at := func(d time.Duration) int64 { return now.Add(-d).UnixNano() }
	w := Racy
	tests := []struct {
		name string
		st   Stat
		want bool
	}{
		{"whole seconds, 1 s old", Stat{Mod: at(3 * time.Second), Change: at(time.Second)}, true},
		{"whole seconds, 3 s old", Stat{Mod: at(3 * time.Second), Change: at(3 * time.Second)}, false},
		{"fine times, 1 s old", Stat{Mod: at(time.Second + time.Millisecond), Change: at(time.Second + 3)}, false},
		{"fine times, 50 ms old", Stat{Mod: at(time.Hour), Change: at(50*time.Millisecond + 7)}, true},
		{"changed in the future", Stat{Mod: at(-time.Hour + 7), Change: at(-time.Hour + 7)}, true},
	}
	for _, tt := range tests {
		if got := w.Racy(tt.st, now); got != tt.want {
			t.Errorf("%s: racy %v; want %v", tt.name, got, tt.want)
		}
	}
}
