package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Store is what replicas share. Every method is safe for concurrent use.
// A method that cannot reach the backing server returns an error that
// wraps [ErrUnavailable].
type Store interface {
	// Get returns the value at key, or an error wrapping ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Set writes value at key. A ttl above zero makes the key expire
	// after it; zero keeps it until it is deleted.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// Delete removes key and reports whether it was there.
	Delete(ctx context.Context, key string) (bool, error)
	// CompareAndSwap writes next at key only if the current value is old,
	// atomically across replicas. A nil old means "only if key is
	// absent"; a nil next deletes key. It reports whether it wrote.
	// [Update] is the read-modify-write loop built on it.
	CompareAndSwap(ctx context.Context, key string, old, next []byte, ttl time.Duration) (bool, error)
	// Incr adds delta to the integer at key (absent counts as 0) and
	// returns the sum. A ttl above zero is set when the key has none,
	// so a counter that Incr creates expires ttl after its first
	// increment. A value that is not a decimal integer gives ErrNotInteger.
	Incr(ctx context.Context, key string, delta int64, ttl time.Duration) (int64, error)

	// Allow takes one unit from the rate limit at key: limit units per
	// period, counted across replicas (GCRA: a burst of up to limit,
	// then one unit every period/limit). When it refuses, RetryAfter
	// says when the next unit is free.
	Allow(ctx context.Context, key string, limit int64, period time.Duration) (Decision, error)

	// Publish sends payload to every current subscriber of channel, on
	// every replica. A message sent while no one listens is lost, as in
	// Redis: callers keep what must outlive a message in a record.
	Publish(ctx context.Context, channel string, payload []byte) error
	// Subscribe listens on channels until the Subscription is closed.
	// It returns once the subscription is in place, so a message
	// published after it returns is delivered. A Redis subscription
	// resubscribes by itself after the server restarts.
	Subscribe(ctx context.Context, channels ...string) (Subscription, error)

	// KV returns the key-value bucket of namespace ns (one per plugin),
	// charged to quota.
	KV(ns string, quota Quota) Bucket

	// Ping checks that the store answers.
	Ping(ctx context.Context) error
	// Close releases the connection. Subscriptions end.
	Close() error
}

// Bucket is one namespace of plugin key-value state, shaped after
// wasi:keyvalue's store and atomics interfaces. Keys of two buckets never
// meet. Writes that would take the bucket over its [Quota] fail with a
// *QuotaError and change nothing.
type Bucket interface {
	Get(ctx context.Context, key string) ([]byte, error)
	Set(ctx context.Context, key string, value []byte) error
	Delete(ctx context.Context, key string) error
	Exists(ctx context.Context, key string) (bool, error)
	// Keys returns up to about limit keys after cursor ("" starts) and
	// the cursor to pass next, "" at the end. Redis may repeat a key
	// across pages (HSCAN); a key present for the whole walk is
	// returned at least once.
	Keys(ctx context.Context, cursor string, limit int) (keys []string, next string, err error)
	// Increment adds delta to the decimal integer at key (absent counts
	// as 0) and returns the sum, atomically across replicas.
	Increment(ctx context.Context, key string, delta int64) (int64, error)
	// Usage reports the keys the bucket holds and the bytes charged to
	// it (the length of every key plus its value).
	Usage(ctx context.Context) (keys, bytes int64, err error)
}

// Quota bounds one bucket. Zero means no bound.
type Quota struct {
	MaxKeys  int64
	MaxBytes int64
}

// Decision is the answer of [Store.Allow].
type Decision struct {
	Allowed bool
	// RetryAfter is when the next unit is free, if Allowed is false.
	RetryAfter time.Duration
}

// Subscription delivers the messages of the channels it listens on.
type Subscription interface {
	// C delivers messages in the order one replica published them. It
	// is closed when the subscription is.
	C() <-chan Message
	Close() error
}

// Message is one published payload.
type Message struct {
	Channel string
	Payload []byte
}

var (
	// ErrNotFound: the key is absent or expired.
	ErrNotFound = errors.New("not found")
	// ErrUnavailable: the store cannot be reached. What needs shared
	// state fails with it; what does not keeps serving.
	ErrUnavailable = errors.New("store unavailable")
	// ErrQuota: a bucket write would exceed its Quota. The error is a
	// *QuotaError.
	ErrQuota = errors.New("quota exceeded")
	// ErrNotInteger: an increment met a value that is not a decimal
	// integer.
	ErrNotInteger = errors.New("value is not an integer")
)

// QuotaError says which bound of a Quota a write would have crossed.
type QuotaError struct {
	NS    string
	Limit string // "keys" or "bytes"
	Max   int64
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("bucket %q: %s quota exceeded: at most %d", e.NS, e.Limit, e.Max)
}

// Is makes errors.Is(err, ErrQuota) hold.
func (e *QuotaError) Is(target error) bool { return target == ErrQuota }

// Env names the environment variables Open reads.
const (
	// EnvURL overrides `[server] store`.
	EnvURL = "MCPHOST_STORE"
	// EnvPassword is the Redis password (AUTH), kept out of the URL and
	// the config file. It wins over a password in the URL.
	EnvPassword = "MCPHOST_STORE_PASSWORD"
)

// Open returns the store that rawURL names: "" gives the in-process
// [Memory] store, `redis://` or `rediss://` a [Redis] store (see
// [ParseRedisURL] for Sentinel and Cluster). The password comes from
// MCPHOST_STORE_PASSWORD when it is set. Open does not dial: a replica
// starts while Redis is down, serves what needs no shared state, and
// connects when Redis answers. Call Ping to learn at start whether it does.
func Open(rawURL string) (Store, error) {
	if rawURL == "" {
		return NewMemory(), nil
	}
	scheme, _, _ := strings.Cut(rawURL, "://")
	switch scheme {
	case "redis", "rediss":
	default:
		return nil, fmt.Errorf("store %q: scheme %q: want redis:// or rediss:// (or no store for the in-process one)", redact(rawURL), scheme)
	}
	opts, err := ParseRedisURL(rawURL)
	if err != nil {
		return nil, err
	}
	if pw := os.Getenv(EnvPassword); pw != "" {
		opts.Password = pw
	}
	return NewRedis(opts), nil
}

// URL returns the store URL to use: MCPHOST_STORE when set, else the
// configured one.
func URL(configured string) string {
	if v := os.Getenv(EnvURL); v != "" {
		return v
	}
	return configured
}

// Update applies fn to the value at key until its CompareAndSwap wins:
// the read-modify-write that many replicas may run at once without one
// losing the other's change. fn gets nil when key is absent; it returns
// the value to write (nil deletes). An error from fn stops the loop and
// is returned as is.
func Update(ctx context.Context, s Store, key string, ttl time.Duration, fn func(old []byte) ([]byte, error)) ([]byte, error) {
	for {
		old, err := s.Get(ctx, key)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		next, err := fn(old)
		if err != nil {
			return nil, err
		}
		ok, err := s.CompareAndSwap(ctx, key, old, next, ttl)
		if err != nil {
			return nil, err
		}
		if ok {
			return next, nil
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
}

// Liveness keys: a replica announces itself under replicaKey(id) with a
// TTL and renews it; a peer that finds the key gone knows the replica
// stopped renewing (it died or lost the store).
func replicaKey(id string) string { return "replica:" + id }

// Announce marks replica id alive for ttl. A replica calls it every
// ttl/3 or so (see [KeepAlive]).
func Announce(ctx context.Context, s Store, id string, ttl time.Duration) error {
	return s.Set(ctx, replicaKey(id), []byte(time.Now().UTC().Format(time.RFC3339Nano)), ttl)
}

// Alive reports whether replica id announced itself within its ttl.
func Alive(ctx context.Context, s Store, id string) (bool, error) {
	_, err := s.Get(ctx, replicaKey(id))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNotFound):
		return false, nil
	default:
		return false, err
	}
}

// Withdraw removes replica id's announcement, so peers see it gone at
// once rather than after its ttl (a clean shutdown).
func Withdraw(ctx context.Context, s Store, id string) error {
	_, err := s.Delete(ctx, replicaKey(id))
	return err
}

// KeepAlive announces replica id every ttl/3 until ctx ends, then
// withdraws it. It returns when ctx ends; the caller runs it in its own
// goroutine and owns its exit through ctx. A failed announcement is
// passed to onErr (which may log it) and retried at the next tick.
func KeepAlive(ctx context.Context, s Store, id string, ttl time.Duration, onErr func(error)) {
	tick := time.NewTicker(ttl / 3)
	defer tick.Stop()
	for {
		if err := Announce(ctx, s, id, ttl); err != nil && ctx.Err() == nil && onErr != nil {
			onErr(err)
		}
		select {
		case <-ctx.Done():
			wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			if err := Withdraw(wctx, s, id); err != nil && onErr != nil {
				onErr(err)
			}
			cancel()
			return
		case <-tick.C:
		}
	}
}

// Redact hides the password of a store URL, for messages and logs.
func Redact(raw string) string { return redact(raw) }

func redact(raw string) string {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return raw
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw
	}
	user, _, _ := strings.Cut(rest[:at], ":")
	return scheme + "://" + user + ":xxxxx" + rest[at:]
}
