package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// prefix is put before every key and channel Redis holds for mcphost, so
// a shared server (or database) can serve other programs too.
const prefix = "mcphost:"

// Redis is the store on a Redis-compatible server, through go-redis's
// UniversalClient: one node, Sentinel or Cluster. go-redis reconnects
// after the server restarts, and a subscription resubscribes.
type Redis struct {
	c redis.UniversalClient
}

// NewRedis returns a store on the server opts names. It does not dial;
// the first call does.
func NewRedis(opts *redis.UniversalOptions) *Redis {
	logOnce.Do(func() { redis.SetLogger(slogLogger{}) })
	return &Redis{c: redis.NewUniversalClient(opts)}
}

var logOnce sync.Once

// slogLogger sends go-redis's own log lines (failed dials, reconnects)
// to slog, like every other log line, instead of its log.Logger.
type slogLogger struct{}

func (slogLogger) Printf(ctx context.Context, format string, v ...any) {
	slog.WarnContext(ctx, "redis client", "detail", fmt.Sprintf(format, v...))
}

// ParseRedisURL reads a `redis://` or `rediss://` URL (go-redis's
// ParseURL: user, password, database, TLS, timeouts) plus three query
// parameters of ours that pick the topology:
//
//   - addr=host:port, repeatable: more servers. With two or more
//     addresses and no master_name, the client speaks Cluster.
//   - master_name=NAME: the hosts are Sentinels and NAME the master
//     they watch.
//   - cluster=true: Cluster even with one seed address.
func ParseRedisURL(raw string) (*redis.UniversalOptions, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("store URL: %w", err)
	}
	q := u.Query()
	extra := q["addr"]
	master := q.Get("master_name")
	cluster := q.Get("cluster")
	q.Del("addr")
	q.Del("master_name")
	q.Del("cluster")
	u.RawQuery = q.Encode()
	o, err := redis.ParseURL(u.String())
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", redact(raw), err)
	}
	opts := &redis.UniversalOptions{
		Addrs:           append([]string{o.Addr}, extra...),
		ClientName:      o.ClientName,
		DB:              o.DB,
		Protocol:        o.Protocol,
		Username:        o.Username,
		Password:        o.Password,
		MaxRetries:      o.MaxRetries,
		MinRetryBackoff: o.MinRetryBackoff,
		MaxRetryBackoff: o.MaxRetryBackoff,
		DialTimeout:     o.DialTimeout,
		ReadTimeout:     o.ReadTimeout,
		WriteTimeout:    o.WriteTimeout,
		PoolFIFO:        o.PoolFIFO,
		PoolSize:        o.PoolSize,
		PoolTimeout:     o.PoolTimeout,
		MinIdleConns:    o.MinIdleConns,
		MaxIdleConns:    o.MaxIdleConns,
		ConnMaxIdleTime: o.ConnMaxIdleTime,
		ConnMaxLifetime: o.ConnMaxLifetime,
		TLSConfig:       o.TLSConfig,
		MasterName:      master,
	}
	switch cluster {
	case "", "false":
	case "true":
		opts.IsClusterMode = true
	default:
		return nil, fmt.Errorf("store %s: cluster=%q: want true or false", redact(raw), cluster)
	}
	if (opts.IsClusterMode || len(opts.Addrs) > 1 && master == "") && opts.DB != 0 {
		return nil, fmt.Errorf("store %s: Redis Cluster has database 0 only; drop /%d from the URL", redact(raw), opts.DB)
	}
	return opts, nil
}

// wrap sorts a go-redis error: absent keys become ErrNotFound, a server
// that cannot be reached (or cannot serve: loading, failing over)
// ErrUnavailable, and the caller's own cancellation stays as it is.
func wrap(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, redis.Nil):
		return fmt.Errorf("%s: %w", op, ErrNotFound)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: %w", op, err)
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		msg := rerr.Error()
		switch {
		case strings.Contains(msg, "not an integer"), strings.Contains(msg, "overflow"):
			return fmt.Errorf("%s: %w", op, ErrNotInteger)
		case strings.HasPrefix(msg, "LOADING"), strings.HasPrefix(msg, "READONLY"),
			strings.HasPrefix(msg, "MASTERDOWN"), strings.HasPrefix(msg, "CLUSTERDOWN"),
			strings.HasPrefix(msg, "TRYAGAIN"), strings.HasPrefix(msg, "NOAUTH"),
			strings.HasPrefix(msg, "WRONGPASS"):
			return fmt.Errorf("%s: %w: %w", op, ErrUnavailable, err)
		}
		return fmt.Errorf("%s: redis: %w", op, err)
	}
	return fmt.Errorf("%s: %w: %w", op, ErrUnavailable, err)
}

func (r *Redis) Get(ctx context.Context, key string) ([]byte, error) {
	v, err := r.c.Get(ctx, prefix+key).Bytes()
	return v, wrap("store get "+key, err)
}

func (r *Redis) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	return wrap("store set "+key, r.c.Set(ctx, prefix+key, value, max(ttl, 0)).Err())
}

func (r *Redis) Delete(ctx context.Context, key string) (bool, error) {
	n, err := r.c.Del(ctx, prefix+key).Result()
	return n > 0, wrap("store delete "+key, err)
}

var casScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if ARGV[1] == '0' then
  if cur then return 0 end
elseif cur ~= ARGV[2] then
  return 0
end
if ARGV[3] == '1' then
  redis.call('DEL', KEYS[1])
  return 1
end
local ttl = tonumber(ARGV[5])
if ttl > 0 then
  redis.call('SET', KEYS[1], ARGV[4], 'PX', ttl)
else
  redis.call('SET', KEYS[1], ARGV[4])
end
return 1
`)

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

func (r *Redis) CompareAndSwap(ctx context.Context, key string, old, next []byte, ttl time.Duration) (bool, error) {
	n, err := casScript.Run(ctx, r.c, []string{prefix + key},
		flag(old != nil), old, flag(next == nil), next, ttl.Milliseconds()).Int()
	return n == 1, wrap("store compare-and-swap "+key, err)
}

var incrScript = redis.NewScript(`
local n = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = tonumber(ARGV[2])
if ttl > 0 and redis.call('PTTL', KEYS[1]) == -1 then
  redis.call('PEXPIRE', KEYS[1], ttl)
end
return n
`)

func (r *Redis) Incr(ctx context.Context, key string, delta int64, ttl time.Duration) (int64, error) {
	n, err := incrScript.Run(ctx, r.c, []string{prefix + key}, delta, ttl.Milliseconds()).Int64()
	return n, wrap("store incr "+key, err)
}

// gcraScript keeps the theoretical arrival time (microseconds, server
// clock, so replicas' clocks need not agree) of the next unit. It
// returns 0 when it takes a unit, else the microseconds until one is free.
var gcraScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if tat < now then tat = now end
if tat - now > tolerance then
  return tat - now - tolerance
end
tat = tat + interval
redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.floor((tat - now) / 1000) + 1)
return 0
`)

func (r *Redis) Allow(ctx context.Context, key string, limit int64, period time.Duration) (Decision, error) {
	if limit <= 0 || period <= 0 {
		return Decision{}, fmt.Errorf("rate %d per %s: want both above zero", limit, period)
	}
	interval := max(period.Microseconds()/limit, 1)
	tolerance := period.Microseconds() - interval
	wait, err := gcraScript.Run(ctx, r.c, []string{prefix + "rate:" + key}, interval, tolerance).Int64()
	if err != nil {
		return Decision{}, wrap("store rate "+key, err)
	}
	if wait > 0 {
		return Decision{RetryAfter: time.Duration(wait) * time.Microsecond}, nil
	}
	return Decision{Allowed: true}, nil
}

func (r *Redis) Publish(ctx context.Context, channel string, payload []byte) error {
	return wrap("store publish "+channel, r.c.Publish(ctx, prefix+channel, payload).Err())
}

// redisSub forwards go-redis's message channel, which survives
// reconnects (its health check pings and resubscribes), to C without the
// prefix. The forwarding goroutine ends when Close closes the go-redis
// channel.
type redisSub struct {
	ps   *redis.PubSub
	out  chan Message
	once sync.Once
}

func (r *Redis) Subscribe(ctx context.Context, channels ...string) (Subscription, error) {
	names := make([]string, len(channels))
	for i, c := range channels {
		names[i] = prefix + c
	}
	ps := r.c.Subscribe(ctx, names...)
	// Wait for every confirmation, so a message published after
	// Subscribe returns is delivered.
	for range names {
		m, err := ps.Receive(ctx)
		if err != nil {
			ps.Close()
			return nil, wrap("store subscribe", err)
		}
		if _, ok := m.(*redis.Subscription); !ok {
			ps.Close()
			return nil, fmt.Errorf("store subscribe: unexpected %T before the confirmation", m)
		}
	}
	s := &redisSub{ps: ps, out: make(chan Message, 64)}
	in := ps.Channel(redis.WithChannelSize(256))
	go func() {
		defer close(s.out)
		for m := range in {
			s.out <- Message{Channel: strings.TrimPrefix(m.Channel, prefix), Payload: []byte(m.Payload)}
		}
	}()
	return s, nil
}

func (s *redisSub) C() <-chan Message { return s.out }

// Close ends the subscription. A reader should drain C until it closes,
// or the forwarder may wait on it.
func (s *redisSub) Close() error {
	var err error
	s.once.Do(func() { err = s.ps.Close() })
	return err
}

func (r *Redis) Ping(ctx context.Context) error {
	return wrap("store ping", r.c.Ping(ctx).Err())
}

func (r *Redis) Close() error { return r.c.Close() }

// redisBucket keeps one namespace as a hash, with the bytes charged to it
// in a counter beside it. Both keys carry the namespace as a hash tag, so
// in a Cluster they live in one slot and one script can touch both.
type redisBucket struct {
	r     *Redis
	ns    string
	quota Quota
	keys  []string // hash, bytes counter
}

func (r *Redis) KV(ns string, quota Quota) Bucket {
	h := prefix + "kv:{" + ns + "}"
	return &redisBucket{r: r, ns: ns, quota: quota, keys: []string{h, h + ":bytes"}}
}

func (b *redisBucket) op(name, key string) string {
	return fmt.Sprintf("store bucket %q %s %q", b.ns, name, key)
}

func (b *redisBucket) Get(ctx context.Context, key string) ([]byte, error) {
	v, err := b.r.c.HGet(ctx, b.keys[0], key).Bytes()
	return v, wrap(b.op("get", key), err)
}

func (b *redisBucket) Exists(ctx context.Context, key string) (bool, error) {
	ok, err := b.r.c.HExists(ctx, b.keys[0], key).Result()
	return ok, wrap(b.op("exists", key), err)
}

// kvSetScript writes one field if the quota allows it: 0 written,
// 1 over the key bound, 2 over the byte bound. A write that does not add
// a key or bytes always passes, so a bucket over a lowered quota can
// still shrink.
var kvSetScript = redis.NewScript(`
local old = redis.call('HGET', KEYS[1], ARGV[1])
local maxk = tonumber(ARGV[3])
local maxb = tonumber(ARGV[4])
local delta
if old then
  delta = string.len(ARGV[2]) - string.len(old)
else
  delta = string.len(ARGV[1]) + string.len(ARGV[2])
  if maxk > 0 and redis.call('HLEN', KEYS[1]) + 1 > maxk then return 1 end
end
local size = tonumber(redis.call('GET', KEYS[2]) or '0')
if maxb > 0 and delta > 0 and size + delta > maxb then return 2 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('INCRBY', KEYS[2], delta)
return 0
`)

func (b *redisBucket) quotaErr(code int64) error {
	switch code {
	case 1:
		return &QuotaError{NS: b.ns, Limit: "keys", Max: b.quota.MaxKeys}
	case 2:
		return &QuotaError{NS: b.ns, Limit: "bytes", Max: b.quota.MaxBytes}
	}
	return nil
}

func (b *redisBucket) Set(ctx context.Context, key string, value []byte) error {
	code, err := kvSetScript.Run(ctx, b.r.c, b.keys, key, value, b.quota.MaxKeys, b.quota.MaxBytes).Int64()
	if err != nil {
		return wrap(b.op("set", key), err)
	}
	return b.quotaErr(code)
}

var kvDeleteScript = redis.NewScript(`
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then
  redis.call('HDEL', KEYS[1], ARGV[1])
  redis.call('DECRBY', KEYS[2], string.len(ARGV[1]) + string.len(old))
end
return 0
`)

func (b *redisBucket) Delete(ctx context.Context, key string) error {
	return wrap(b.op("delete", key), kvDeleteScript.Run(ctx, b.r.c, b.keys, key).Err())
}

// kvIncrScript: HINCRBY checks the integer (an error leaves the hash as
// it was); the new length is read back as the exact string, and the
// write is undone if it crosses the quota. Returns {code, value}.
var kvIncrScript = redis.NewScript(`
local old = redis.call('HGET', KEYS[1], ARGV[1])
local maxk = tonumber(ARGV[3])
local maxb = tonumber(ARGV[4])
if not old and maxk > 0 and redis.call('HLEN', KEYS[1]) + 1 > maxk then return {1, '0'} end
redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2])
local v = redis.call('HGET', KEYS[1], ARGV[1])
local delta
if old then
  delta = string.len(v) - string.len(old)
else
  delta = string.len(ARGV[1]) + string.len(v)
end
local size = tonumber(redis.call('GET', KEYS[2]) or '0')
if maxb > 0 and delta > 0 and size + delta > maxb then
  if old then redis.call('HSET', KEYS[1], ARGV[1], old) else redis.call('HDEL', KEYS[1], ARGV[1]) end
  return {2, '0'}
end
redis.call('INCRBY', KEYS[2], delta)
return {0, v}
`)

func (b *redisBucket) Increment(ctx context.Context, key string, delta int64) (int64, error) {
	res, err := kvIncrScript.Run(ctx, b.r.c, b.keys, key, delta, b.quota.MaxKeys, b.quota.MaxBytes).Slice()
	if err != nil {
		return 0, wrap(b.op("increment", key), err)
	}
	if len(res) != 2 {
		return 0, fmt.Errorf("%s: script answered %d values, want 2", b.op("increment", key), len(res))
	}
	code, _ := res[0].(int64)
	if err := b.quotaErr(code); err != nil {
		return 0, err
	}
	s, _ := res[1].(string)
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", b.op("increment", key), ErrNotInteger)
	}
	return n, nil
}

func (b *redisBucket) Keys(ctx context.Context, cursor string, limit int) ([]string, string, error) {
	if limit <= 0 {
		limit = 100
	}
	var cur uint64
	if cursor != "" {
		var err error
		if cur, err = strconv.ParseUint(cursor, 10, 64); err != nil {
			return nil, "", fmt.Errorf("store bucket %q keys: cursor %q: not one this store gave", b.ns, cursor)
		}
	}
	// HSCAN with values: NOVALUES needs Redis 7.4, Debian's is 7.0.
	pairs, next, err := b.r.c.HScan(ctx, b.keys[0], cur, "", int64(limit)).Result()
	if err != nil {
		return nil, "", wrap(fmt.Sprintf("store bucket %q keys", b.ns), err)
	}
	keys := make([]string, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		keys = append(keys, pairs[i])
	}
	if next == 0 {
		return keys, "", nil
	}
	return keys, strconv.FormatUint(next, 10), nil
}

func (b *redisBucket) Usage(ctx context.Context) (int64, int64, error) {
	pipe := b.r.c.TxPipeline()
	n := pipe.HLen(ctx, b.keys[0])
	size := pipe.Get(ctx, b.keys[1])
	_, err := pipe.Exec(ctx)
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, 0, wrap(fmt.Sprintf("store bucket %q usage", b.ns), err)
	}
	sz, _ := size.Int64()
	return n.Val(), sz, nil
}
