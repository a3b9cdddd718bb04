package streamable

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// RateCounter counts requests under a key that expires: the per-client
// rate limit (Options.RatePerClient) counts with it. The transport's own
// is in-process; replicas that share a store pass one counted there, so
// that a client's requests add up whichever replica they reach.
type RateCounter interface {
	// Incr adds one to key's count, which starts at zero and is
	// forgotten ttl after its first request, and returns the new count.
	Incr(ctx context.Context, key string, ttl time.Duration) (int64, error)
}

// rateLimit is the per-client rate limit: at most n requests per client
// in each window of per, counted in fixed windows (a burst that straddles
// two windows may reach 2n in one period).
type rateLimit struct {
	n       int64
	per     time.Duration
	counter RateCounter // nil: the in-process one
	local   localCounter
	now     func() time.Time

	log      *slog.Logger
	degraded atomic.Bool // the counter failed: counting in-process until it answers
}

// admit counts r against client's rate; over it, it answers 429 with
// Retry-After (the seconds until the window ends) and reports false.
func (rl *rateLimit) admit(w http.ResponseWriter, r *http.Request, client, name string) bool {
	if rl == nil || rl.n == 0 {
		return true
	}
	now := rl.now()
	window := now.UnixNano() / int64(rl.per)
	key := "rate:" + client + ":" + strconv.FormatInt(window, 10)
	if rl.count(r.Context(), key) <= rl.n {
		return true
	}
	end := time.Unix(0, (window+1)*int64(rl.per))
	retry := int64(math.Ceil(end.Sub(now).Seconds()))
	w.Header().Set("Retry-After", strconv.FormatInt(max(retry, 1), 10))
	rl.log.Warn("request refused", "limit", "rate_per_client", "max", rl.n, "per", rl.per, "client", name, "remote", r.RemoteAddr)
	httpError(w, http.StatusTooManyRequests, codeHTTP, "Too Many Requests: more than "+strconv.FormatInt(rl.n, 10)+
		" requests per "+rl.per.String()+" from this client; retry after "+strconv.FormatInt(max(retry, 1), 10)+"s")
	return false
}

// count adds one to key in the shared counter, or in the in-process one
// while the shared one fails: a call that needs nothing shared keeps
// being served, each replica then counting its own share, and the log
// says so once when it starts and once when it ends.
func (rl *rateLimit) count(ctx context.Context, key string) int64 {
	if rl.counter != nil {
		n, err := rl.counter.Incr(ctx, key, rl.per)
		if err == nil {
			if rl.degraded.CompareAndSwap(true, false) {
				rl.log.Info("rate_per_client: the store answers again; counting across replicas")
			}
			return n
		}
		if rl.degraded.CompareAndSwap(false, true) {
			rl.log.Warn("rate_per_client: the store failed; counting in this replica only until it answers", "err", err)
		}
	}
	n, _ := rl.local.Incr(ctx, key, rl.per) // never fails
	return n
}

// localCounter is the in-process RateCounter. Expired keys are swept
// once per ttl, so it holds about one key per client per window.
type localCounter struct {
	mu        sync.Mutex
	n         map[string]localCount
	nextSweep time.Time
	now       func() time.Time // nil: time.Now
}

type localCount struct {
	n       int64
	expires time.Time
}

func (c *localCounter) Incr(_ context.Context, key string, ttl time.Duration) (int64, error) {
	now := time.Now()
	if c.now != nil {
		now = c.now()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = make(map[string]localCount)
	}
	if now.After(c.nextSweep) {
		for k, v := range c.n {
			if !now.Before(v.expires) {
				delete(c.n, k)
			}
		}
		c.nextSweep = now.Add(ttl)
	}
	v, ok := c.n[key]
	if !ok || !now.Before(v.expires) {
		v = localCount{expires: now.Add(ttl)}
	}
	v.n++
	c.n[key] = v
	return v.n, nil
}
