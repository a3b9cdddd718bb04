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
		{2 * time.Millisecond, false},  // one slow call, counted as 1 ms: ~259 µs
		{10 * time.Microsecond, false}, // ~197 µs: recovers over a few calls
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
	// A first call that compiled the plugin (a second) weighs no more
	// than 1 ms: quick again after a dozen quick calls.
	slow := []byte(`"lazy"`)
	p.record(slow, time.Second)
	for i := range 12 {
		if p.quick(slow) {
			t.Errorf("quick after %d quick calls following a 1 s one; want 12", i)
		}
		p.record(slow, 10*time.Microsecond)
	}
	if !p.quick(slow) {
		t.Errorf("not quick after 12 quick calls following a 1 s one")
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
