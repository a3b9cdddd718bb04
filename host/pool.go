package host

import (
	"sync/atomic"
	"time"
)

// pool runs one connection's work: jobs of type T (a session's requests)
// and reading loops carried on from a reader (see [pool.here]). It is
// generic so that it knows nothing of sessions and requests, and its tests
// need neither.
//
// Its goroutines are workers and, while a reader runs jobs itself, a
// watchdog; close ends both.
//
// Workers. A worker serves jobs one after another instead of exiting
// after one, because a fresh goroutine grows its stack again for every
// call (plugin calls go deep: JSON, schema validation), which cost ~12% of
// a tools/call round trip. Beyond maxIdle idle workers, a worker that
// becomes idle exits.
//
// The watchdog. A transport's one reader may run a job itself when
// nothing else is running (here), so that the answer waits for no
// goroutine to be woken: waking one costs a futex call, and across cores
// an interrupt. The reader must not be stuck in a slow job meanwhile (a
// cancellation, a ping, the client's answer to our own request may be on
// their way), so the watchdog, one goroutine ticking every watchEvery
// while readers run jobs, passes the reader's loop (carry) on to a worker
// when it finds the same job running at two ticks in a row. It does so at
// once when kick is called (a job waits for the client's answer). Its
// ticker is started once for a burst of jobs, not armed for each: arming
// a timer for every job woke an idle P's thread out of the netpoller for
// every job, which is what "every serial call wakes" meant. It stops
// after quietTicks ticks without a job run here.
type pool[T any] struct {
	run     func(T)
	maxIdle int32
	work    chan poolJob[T] // hands jobs to idle workers
	idle    atomic.Int32    // workers waiting on work
	quit    chan struct{}   // closed by close: idle workers and the watchdog exit

	cur      atomic.Pointer[inline]            // the job a reader runs (here), nil when none
	spare    atomic.Pointer[inline]            // an inline record between jobs, reused
	runs     atomic.Uint64                     // jobs run here so far; the watchdog's clock of activity
	watching atomic.Bool                       // a watchdog goroutine is running
	ticker   func() (<-chan time.Time, func()) // the watchdog's ticks; tests replace it
}

// poolJob is one T for a worker, or a reading loop to carry on.
type poolJob[T any] struct {
	t     T
	carry func() // when set, the job is this, not t
}

// inline is one job a reader runs itself: what the watchdog needs to pass
// the reader's loop on.
type inline struct {
	gen   atomic.Uint64 // which run (pool.runs) this is, for the watchdog
	carry func()        // written before state is armed, read after firing
	state atomic.Int32  // inlineIdle, inlineArmed or inlineFired
}

const (
	inlineIdle = iota
	inlineArmed
	inlineFired
)

// maxIdleWorkers bounds the workers a session keeps waiting for the next
// request.
const maxIdleWorkers = 16

// watchEvery is the watchdog's tick. A job run by a reader is passed on
// after between one and two ticks while every P is busy; when every P is
// idle, Go's timers fire late (the netpoller sleeps in whole
// milliseconds), so the bound is then about 2 ms. A shorter tick wakes the
// watchdog more often for nothing; it need not be shorter than a fast
// plugin call, since it is not armed per call.
const watchEvery = 200 * time.Microsecond

// quietTicks is how many ticks without a job run here end the watchdog;
// the next such job starts it again.
const quietTicks = 16

func newPool[T any](run func(T), maxIdle int32) *pool[T] {
	return &pool[T]{run: run, maxIdle: maxIdle, work: make(chan poolJob[T]), quit: make(chan struct{}), ticker: realTicker}
}

func realTicker() (<-chan time.Time, func()) {
	t := time.NewTicker(watchEvery)
	return t.C, t.Stop
}

// queue hands t to an idle worker, or to a new one when none is idle.
func (p *pool[T]) queue(t T) { p.hand(poolJob[T]{t: t}) }

func (p *pool[T]) hand(j poolJob[T]) {
	select {
	case p.work <- j:
	default:
		go p.worker(j)
	}
}

// worker serves j, then jobs from work until it is one idle worker too
// many or the pool closes.
func (p *pool[T]) worker(j poolJob[T]) {
	for {
		if j.carry != nil {
			j.carry()
		} else {
			p.run(j.t)
		}
		if p.idle.Add(1) > p.maxIdle {
			p.idle.Add(-1)
			return
		}
		select {
		case j = <-p.work:
			p.idle.Add(-1)
		case <-p.quit:
			return
		}
	}
}

// here runs t on the calling goroutine, a transport's reader, and reports
// whether the caller keeps reading: false means the watchdog passed carry,
// the rest of the caller's reading loop, to a worker meanwhile, where
// reading now goes on, and the caller must return without reading. While
// another reader of the pool runs a job here, t goes to a worker instead.
func (p *pool[T]) here(t T, carry func()) bool {
	h := p.spare.Swap(nil)
	if h == nil {
		h = new(inline)
	}
	h.carry = carry
	h.gen.Store(p.runs.Add(1))
	h.state.Store(inlineArmed)
	if !p.cur.CompareAndSwap(nil, h) {
		h.state.Store(inlineIdle)
		p.spare.Store(h)
		p.queue(t)
		return true
	}
	p.watch()
	p.run(t)
	p.cur.CompareAndSwap(h, nil)
	if !h.state.CompareAndSwap(inlineArmed, inlineIdle) {
		return false // fire has h now; it is not reused
	}
	p.spare.Store(h)
	return true
}

// kick passes reading on at once if a reader is running a job: the job
// (or another) waits for a message only reading can bring.
func (p *pool[T]) kick() {
	if h := p.cur.Load(); h != nil {
		p.fire(h)
	}
}

// fire passes on the reading loop of h's job if it is still running. A
// stale h (the watchdog loaded it before its job ended and the record was
// reused for the next) passes the next job's loop on early, which is
// always safe: the loop is the same one.
func (p *pool[T]) fire(h *inline) {
	if h.state.CompareAndSwap(inlineArmed, inlineFired) {
		p.cur.CompareAndSwap(h, nil)
		p.hand(poolJob[T]{carry: h.carry})
	}
}

// watch starts the watchdog unless it is running.
func (p *pool[T]) watch() {
	if !p.watching.Load() && p.watching.CompareAndSwap(false, true) {
		go p.watchdog()
	}
}

// watchdog passes on the reading loop of a job run here that it finds
// running at two ticks in a row. It exits after quietTicks ticks in which
// no job was run here, or when the pool closes.
func (p *pool[T]) watchdog() {
	tick, stop := p.ticker()
	defer stop()
	var seen uint64 // the run found at the last tick; 0: none
	last, quiet := p.runs.Load(), 0
	for {
		select {
		case <-tick:
		case <-p.quit:
			return // watching stays set: nothing runs here after close
		}
		if h := p.cur.Load(); h != nil {
			quiet = 0
			if g := h.gen.Load(); g == seen {
				p.fire(h)
			} else {
				seen = g
			}
			continue
		}
		seen = 0
		if n := p.runs.Load(); n != last {
			last, quiet = n, 0
			continue
		}
		if quiet++; quiet < quietTicks {
			continue
		}
		// Stop, unless a job started here meanwhile and found this
		// watchdog still watching (it started no other).
		p.watching.Store(false)
		if p.cur.Load() == nil || !p.watching.CompareAndSwap(false, true) {
			return
		}
		quiet = 0
	}
}

// close makes idle workers and the watchdog exit; busy workers exit when
// their job ends. Nothing may be queued or run here afterwards.
func (p *pool[T]) close() { close(p.quit) }
