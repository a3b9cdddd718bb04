package host

import (
	"sync"
	"sync/atomic"
	"time"
)

// quickBelow is the recent duration under which a request counts as quick
// (see [Conn.HandleLeading]): a transport may serve it on its reading
// goroutine before reading on. A Wasm echo takes ~20 µs.
const quickBelow = 50 * time.Microsecond

// maxSample caps one duration's weight in the average: a tool whose first
// call compiles it (hundreds of milliseconds) is quick again after a dozen
// quick calls rather than three dozen, while one that is always slow
// stays slow.
const maxSample = 20 * quickBelow

// maxPaced bounds the names one method remembers durations for: names
// come from clients, and a client sending ever new ones must not grow the
// table without end. Beyond it, new names are not quick.
const maxPaced = 1024

// pace remembers how long one method's recent requests took, per target
// (a tool's, prompt's or resource's name; "" for methods without one), as
// a moving average.
type pace struct {
	mu  sync.RWMutex
	avg map[string]*atomic.Int64 // nanoseconds
}

// quick reports whether requests for target have recently been answered
// in under quickBelow. A target never seen is not quick.
func (p *pace) quick(target []byte) bool {
	p.mu.RLock()
	a := p.avg[string(target)]
	p.mu.RUnlock()
	return a != nil && time.Duration(a.Load()) < quickBelow
}

// record adds one request's duration to target's average, weighing the
// newest a quarter: a target that turns slow stops being quick after one
// or two slow requests.
func (p *pace) record(target []byte, d time.Duration) {
	d = min(d, maxSample)
	p.mu.RLock()
	a := p.avg[string(target)]
	p.mu.RUnlock()
	if a == nil {
		p.mu.Lock()
		if a = p.avg[string(target)]; a == nil {
			if len(p.avg) >= maxPaced {
				p.mu.Unlock()
				return
			}
			if p.avg == nil {
				p.avg = make(map[string]*atomic.Int64)
			}
			a = new(atomic.Int64)
			a.Store(int64(d))
			p.avg[string(target)] = a
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
	}
	// Concurrent updates may lose one another's sample, which an average
	// of recent durations can afford.
	old := a.Load()
	a.Store(old + (int64(d)-old)/4)
}

// paceTarget is what a request's durations are remembered by within its
// method.
func paceTarget(req *request) []byte {
	switch req.method {
	case "tools/call", "prompts/get":
		return req.param("name")
	case "resources/read":
		return req.param("uri")
	}
	return nil
}
