package streamable

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/plugins/store"
)

// rateLimit is the per-client rate limit (Options.RatePerClient), counted
// by the store's Allow: with a shared store every replica adds to the
// same count, with the in-process one each counts its own.
type rateLimit struct {
	n     int64
	per   time.Duration
	store store.Store
	// local counts while the store fails, so that calls that need
	// nothing shared go on being served.
	local    *store.Memory
	log      *slog.Logger
	degraded atomic.Bool  // the store failed: counting in local until it answers
	retryAt  atomic.Int64 // while degraded, the store is asked again from then (Unix ns)
}

// storeRetry is how often a failing store is asked again: in between,
// requests are counted in-process at once rather than each waiting for
// the store to fail.
const storeRetry = time.Second

func newRateLimit(opts Options, log *slog.Logger) *rateLimit {
	if opts.RatePerClient <= 0 {
		return nil
	}
	rl := &rateLimit{n: int64(opts.RatePerClient), per: opts.RatePeriod, store: opts.Store, local: store.NewMemory(), log: log}
	if rl.per <= 0 {
		rl.per = time.Minute
	}
	if rl.store == nil {
		rl.store = rl.local
	}
	return rl
}

// admit counts r against client's rate; over it, it answers 429 with
// Retry-After (whole seconds until one more request fits) and reports
// false.
func (rl *rateLimit) admit(w http.ResponseWriter, r *http.Request, client, name string) bool {
	if rl == nil {
		return true
	}
	d := rl.allow(r.Context(), client)
	if d.Allowed {
		return true
	}
	retry := strconv.FormatInt(max(int64(math.Ceil(d.RetryAfter.Seconds())), 1), 10)
	w.Header().Set("Retry-After", retry)
	rl.log.Warn("request refused", "limit", "rate_per_client", "max", rl.n, "per", rl.per, "client", name, "remote", r.RemoteAddr)
	httpError(w, http.StatusTooManyRequests, codeHTTP, "Too Many Requests: more than "+strconv.FormatInt(rl.n, 10)+
		" requests per "+rl.per.String()+" from this client; retry after "+retry+"s")
	return false
}

// allow asks the store, or the in-process count while the store fails;
// the log says so once when that starts and once when it ends.
func (rl *rateLimit) allow(ctx context.Context, client string) store.Decision {
	if rl.store != rl.local && time.Now().UnixNano() >= rl.retryAt.Load() {
		d, err := rl.store.Allow(ctx, client, rl.n, rl.per)
		if err == nil {
			if rl.degraded.CompareAndSwap(true, false) {
				rl.log.Info("rate_per_client: the store answers again; counting across replicas")
			}
			return d
		}
		// Meanwhile requests do not wait on a store that fails.
		rl.retryAt.Store(time.Now().Add(storeRetry).UnixNano())
		if rl.degraded.CompareAndSwap(false, true) {
			rl.log.Warn("rate_per_client: the store failed; counting in this replica only until it answers", "err", err, "retry_every", storeRetry)
		}
	}
	d, err := rl.local.Allow(ctx, client, rl.n, rl.per)
	if err != nil { // only a cancelled request
		return store.Decision{Allowed: true}
	}
	return d
}
