package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

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

// floodGate holds a plugin's bucket, made on first use.
type floodGate struct {
	once sync.Once
	b    *rate.Limiter
}

func (g *floodGate) bucket() *rate.Limiter {
	g.once.Do(func() { g.b = rate.NewLimiter(pluginRate, pluginBurst) })
	return g.b
}

// limiter is the part of a call's Peer that counts what it sends. The
// call's bucket is made at its first message: most calls send none.
type limiter struct {
	call, plugin *rate.Limiter
	made         sync.Once
	dropped      atomic.Int64
}

// allow reports whether one more message may go to the client, counting
// it as dropped if not.
func (l *limiter) allow() bool {
	l.made.Do(func() { l.call = rate.NewLimiter(callRate, callBurst) })
	now := time.Now()
	if l.call.AllowN(now, 1) && l.plugin.AllowN(now, 1) {
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
