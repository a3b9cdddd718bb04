package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/sandbox"
)

// Flood control. What a plugin sends its client during a call (log
// messages, progress, resource updates) passes two token buckets: one of
// the call and one of the plugin, shared by all its calls. A message that
// finds either empty is dropped, and when the call ends one closing log
// message says how many were. list_changed signals are not counted: they
// never reach the client as such, and any number of them costs one re-read
// of the lists (see dynamic.go). See RATIONALE.md for the numbers.
const (
	callBurst   = 100 // messages one call may send at once
	callRate    = 50  // and per second after that
	pluginBurst = 500 // the same for all of a plugin's calls together
	pluginRate  = 200
)

// bucket is a token bucket: burst tokens, refilled at rate per second.
type bucket struct {
	mu     sync.Mutex
	tokens float64
	last   time.Time
	rate   float64
	burst  float64
}

func newBucket(rate, burst float64) *bucket {
	return &bucket{tokens: burst, rate: rate, burst: burst}
}

// take removes one token if there is one.
func (b *bucket) take(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.last.IsZero() {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// floodGate holds a plugin's bucket, made on first use.
type floodGate struct {
	once sync.Once
	b    *bucket
}

func (g *floodGate) bucket() *bucket {
	g.once.Do(func() { g.b = newBucket(pluginRate, pluginBurst) })
	return g.b
}

// limiter is the part of a call's Peer that counts what it sends.
type limiter struct {
	call, plugin *bucket
	dropped      atomic.Int64
}

// allow reports whether one more message may go to the client, counting
// it as dropped if not.
func (l *limiter) allow() bool {
	now := time.Now()
	if l.call.take(now) && l.plugin.take(now) {
		return true
	}
	l.dropped.Add(1)
	return false
}

// finish sends the closing message of a call that dropped messages. It is
// not rate-limited: there is one per call.
func (l *limiter) finish(ctx context.Context, inner sandbox.Peer, plugin string) {
	n := l.dropped.Load()
	if n == 0 || inner == nil {
		return
	}
	data, _ := json.Marshal(fmt.Sprintf("plugin %q sent messages faster than %d/s (bursts of %d); %d dropped", plugin, callRate, callBurst, n))
	params := json.RawMessage(`{"level":"warning","logger":"mcphost","data":` + string(data) + `}`)
	_ = inner.Notify(context.WithoutCancel(ctx), "notifications/message", params)
}
