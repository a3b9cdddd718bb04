package streamable

import (
	"strconv"
	"testing"
)

// TestReplayRing: the replay buffer starts empty, grows as events come,
// never beyond ReplayEvents, and keeps the newest events in order when it
// evicts, by count or by bytes.
func TestReplayRing(t *testing.T) {
	tests := []struct {
		name                  string
		maxEvents, maxBytes   int
		push                  int
		wantN, wantLen, first int // events kept, ring size, first seq kept
	}{
		{"none", 256, 1 << 20, 0, 0, 0, 0},
		{"one", 256, 1 << 20, 1, 1, 8, 0},
		{"grows by doubling", 256, 1 << 20, 9, 9, 16, 0},
		{"capped at max events", 20, 1 << 20, 50, 20, 20, 30},
		{"small max", 3, 1 << 20, 10, 3, 3, 7},
		{"bytes bound", 256, 25, 40, 12, 32, 28}, // events of 2 bytes ("28".."39")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := &httpSession{maxEvents: tt.maxEvents, maxBytes: tt.maxBytes, streams: map[int64]*stream{}}
			st := &stream{num: 1}
			for i := range tt.push {
				hs.pushLocked(st, []byte(strconv.Itoa(i)))
			}
			if hs.n != tt.wantN || len(hs.ring) != tt.wantLen || st.buffered != tt.wantN {
				t.Fatalf("n %d, ring %d, buffered %d; want %d, %d, %d", hs.n, len(hs.ring), st.buffered, tt.wantN, tt.wantLen, tt.wantN)
			}
			got := hs.eventsAfter(nil, st, -1)
			for i, e := range got {
				if want := int64(tt.first + i); e.seq != want || string(e.data) != strconv.Itoa(int(want)) {
					t.Fatalf("event %d: seq %d data %q; want %d", i, e.seq, e.data, want)
				}
			}
		})
	}
}
