package host

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeTicks is a watchdog's ticker driven by the test: every send on c
// is one tick, and a send returns only once the watchdog takes it, so the
// tick before it has been fully handled. stopped receives once per
// ticker stopped; made counts tickers made.
type fakeTicks struct {
	c       chan time.Time
	stopped chan struct{}
	made    atomic.Int32
}

func newFakeTicks() *fakeTicks {
	return &fakeTicks{c: make(chan time.Time), stopped: make(chan struct{}, 8)}
}

func (f *fakeTicks) ticker() (<-chan time.Time, func()) {
	f.made.Add(1)
	return f.c, func() { f.stopped <- struct{}{} }
}

// tick sends n ticks; when it returns, all but the last have been handled.
func (f *fakeTicks) tick(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case f.c <- time.Time{}:
		case <-time.After(guard):
			t.Fatal("timed out: no watchdog took the tick")
		}
	}
}

// testPool is a pool of func() jobs (each job runs itself) with a
// ticker the test drives.
func testPool(t *testing.T) (*pool[func()], *fakeTicks) {
	f := newFakeTicks()
	p := newPool(func(j func()) { j() }, 2)
	p.ticker = f.ticker
	t.Cleanup(p.close)
	return p, f
}

// A job run here keeps its caller reading unless it runs on: it is passed
// on (carry runs elsewhere while the job still runs, and here reports
// false) when the watchdog finds it running at two ticks in a row, or at
// once when kicked; never after one tick alone.
func TestPoolHere(t *testing.T) {
	for _, tc := range []struct {
		name string
		// during runs inside the job, on the reader's goroutine.
		during  func(t *testing.T, p *pool[func()], f *fakeTicks)
		carried bool
	}{
		{"quick", func(*testing.T, *pool[func()], *fakeTicks) {}, false},
		// Two sends: the first tick has been handled when the second
		// is taken; the second finds another gen or none.
		{"one tick", func(t *testing.T, _ *pool[func()], f *fakeTicks) { f.tick(t, 1) }, false},
		{"two ticks", func(t *testing.T, _ *pool[func()], f *fakeTicks) { f.tick(t, 3) }, true},
		{"kicked", func(_ *testing.T, p *pool[func()], _ *fakeTicks) { p.kick() }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, f := testPool(t)
			carried := make(chan struct{}, 1)
			var ended atomic.Bool
			kept := p.here(func() {
				tc.during(t, p, f)
				if tc.carried {
					// The reader's loop goes on while this job runs.
					recv(t, carried, "carry, while the job runs")
					if ended.Load() {
						t.Error("carry ran after the job ended")
					}
				}
				ended.Store(true)
			}, func() { carried <- struct{}{} })
			if kept == tc.carried {
				t.Errorf("here = %v; want %v", kept, !tc.carried)
			}
			if !tc.carried && len(carried) > 0 {
				t.Error("carry ran, yet here reported the caller reads on: two readers")
			}
		})
	}
}

// While one reader runs a job here, another reader's job goes to a
// worker and that reader reads on at once.
func TestPoolHereBusyGoesToWorker(t *testing.T) {
	p, _ := testPool(t)
	release, second := make(chan struct{}), make(chan struct{})
	first := make(chan bool, 1)
	started := make(chan struct{})
	go func() {
		first <- p.here(func() { close(started); <-release }, func() { t.Error("first carry ran") })
	}()
	recv(t, started, "the first job")
	if !p.here(func() { close(second) }, func() { t.Error("second carry ran") }) {
		t.Error("here beside a job run here: false; want true (queued)")
	}
	recv(t, second, "the second job, on a worker")
	close(release)
	if !recv(t, first, "the first here") {
		t.Error("first here: false; want true")
	}
}

// The watchdog starts with the first job run here, stops after quietTicks
// ticks without one, and starts again with the next.
func TestPoolWatchdogStopsWhenQuiet(t *testing.T) {
	p, f := testPool(t)
	for round := int32(1); round <= 2; round++ {
		p.here(func() {}, func() { t.Error("carry ran") })
		f.tick(t, quietTicks)
		if got := f.made.Load(); got != round {
			t.Fatalf("tickers made: %d; want %d", got, round)
		}
		recv(t, f.stopped, "the watchdog's ticker stopped")
		if p.watching.Load() {
			t.Fatal("watching after the watchdog stopped")
		}
	}
}

// Jobs queued together all run at once: none waits for another.
func TestPoolQueue(t *testing.T) {
	for _, n := range []int{1, 3, 20} { // 20: more than maxIdle (2)
		p, _ := testPool(t)
		var started sync.WaitGroup
		started.Add(n)
		release := make(chan struct{})
		done := make(chan int, n)
		for i := range n {
			p.queue(func() { started.Done(); <-release; done <- i })
		}
		all := make(chan struct{})
		go func() { started.Wait(); close(all) }()
		recv(t, all, "every queued job started")
		close(release)
		seen := map[int]bool{}
		for range n {
			seen[recv(t, done, "a job's end")] = true
		}
		if len(seen) != n {
			t.Errorf("%d jobs: %d distinct ended; want %d", n, len(seen), n)
		}
	}
}

// Hammer: while ticks and kicks arrive at any moment, every job run here
// is handed on exactly once or not at all: either here reports the caller
// reads on, or carry runs, never both and never neither.
func TestPoolHereHammer(t *testing.T) {
	p, f := testPool(t)
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(2)
	go func() {
		defer bg.Done()
		for {
			select {
			case f.c <- time.Time{}:
			case <-stop:
				return
			}
		}
	}()
	go func() {
		defer bg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				p.kick()
			}
		}
	}()
	const n = 2000
	var carried atomic.Int32
	kept := 0
	var carries sync.WaitGroup
	for range n {
		carries.Add(1)
		ok := p.here(func() {}, func() { carried.Add(1); carries.Done() })
		if ok {
			kept++
			carries.Done()
		}
	}
	close(stop)
	bg.Wait()
	all := make(chan struct{})
	go func() { carries.Wait(); close(all) }()
	recv(t, all, "every carried loop") // neither kept nor carried hangs here
	if got := kept + int(carried.Load()); got != n {
		t.Errorf("kept %d + carried %d = %d; want %d (each job once)", kept, carried.Load(), got, n)
	}
}
