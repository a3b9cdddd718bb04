package host

import (
	"fmt"
	"testing"
	"time"
)

func TestPace(t *testing.T) {
	var p pace
	echo := []byte(`"echo"`)
	steps := []struct {
		record time.Duration // 0: none
		quick  bool
	}{
		{0, false},                     // never seen
		{10 * time.Microsecond, true},  // first sample is the average
		{20 * time.Microsecond, true},  // 12.5 µs
		{2 * time.Millisecond, false},  // one slow call: ~509 µs
		{10 * time.Microsecond, false}, // ~384 µs: recovers over a few calls
	}
	for i, s := range steps {
		if s.record > 0 {
			p.record(echo, s.record)
		}
		if got := p.quick(echo); got != s.quick {
			t.Errorf("step %d: quick = %v; want %v", i, got, s.quick)
		}
	}
	for range 20 {
		p.record(echo, 10*time.Microsecond)
	}
	if !p.quick(echo) {
		t.Errorf("after 20 quick calls in a row, not quick")
	}
	if p.quick([]byte(`"other"`)) {
		t.Errorf("a name never seen is quick")
	}
}

// Names come from clients: beyond maxPaced, new ones are not remembered.
func TestPaceIsBounded(t *testing.T) {
	var p pace
	for i := range maxPaced + 10 {
		p.record(fmt.Appendf(nil, "%d", i), time.Microsecond)
	}
	if n := len(p.avg); n != maxPaced {
		t.Errorf("remembered %d names; want at most %d", n, maxPaced)
	}
	if !p.quick([]byte("0")) || p.quick(fmt.Appendf(nil, "%d", maxPaced+1)) {
		t.Errorf("want the first names remembered and the last ones not")
	}
}
