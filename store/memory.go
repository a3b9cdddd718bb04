package store

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Memory is the in-process store: what one replica needs, with no extra
// process. Nothing outlives the process, and other replicas do not see
// it. Expired keys are dropped when next touched.
type Memory struct {
	mu      sync.Mutex
	vals    map[string]memValue
	buckets map[string]map[string][]byte
	subs    map[string]map[*memSub]struct{}
	closed  bool
	now     func() time.Time
}

type memValue struct {
	v   []byte
	exp time.Time // zero: never
}

// NewMemory returns an empty in-process store.
func NewMemory() *Memory {
	return &Memory{
		vals:    map[string]memValue{},
		buckets: map[string]map[string][]byte{},
		subs:    map[string]map[*memSub]struct{}{},
		now:     time.Now,
	}
}

// live returns key's value if present and unexpired; mu is held.
func (m *Memory) live(key string) ([]byte, bool) {
	v, ok := m.vals[key]
	if !ok {
		return nil, false
	}
	if !v.exp.IsZero() && !m.now().Before(v.exp) {
		delete(m.vals, key)
		return nil, false
	}
	return v.v, true
}

func (m *Memory) expiry(ttl time.Duration) time.Time {
	if ttl <= 0 {
		return time.Time{}
	}
	return m.now().Add(ttl)
}

func (m *Memory) check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if m.closed {
		return fmt.Errorf("memory store closed: %w", ErrUnavailable)
	}
	return nil
}

func (m *Memory) Get(ctx context.Context, key string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	v, ok := m.live(key)
	if !ok {
		return nil, fmt.Errorf("key %q: %w", key, ErrNotFound)
	}
	return bytes.Clone(v), nil
}

func (m *Memory) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx); err != nil {
		return err
	}
	m.vals[key] = memValue{v: bytes.Clone(value), exp: m.expiry(ttl)}
	return nil
}

func (m *Memory) Delete(ctx context.Context, key string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx); err != nil {
		return false, err
	}
	_, ok := m.live(key)
	delete(m.vals, key)
	return ok, nil
}

func (m *Memory) CompareAndSwap(ctx context.Context, key string, old, next []byte, ttl time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx); err != nil {
		return false, err
	}
	cur, ok := m.live(key)
	if old == nil && ok || old != nil && (!ok || !bytes.Equal(cur, old)) {
		return false, nil
	}
	if next == nil {
		delete(m.vals, key)
		return true, nil
	}
	m.vals[key] = memValue{v: bytes.Clone(next), exp: m.expiry(ttl)}
	return true, nil
}

func (m *Memory) Incr(ctx context.Context, key string, delta int64, ttl time.Duration) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx); err != nil {
		return 0, err
	}
	cur, ok := m.live(key)
	n, err := addDecimal(cur, ok, delta)
	if err != nil {
		return 0, fmt.Errorf("key %q: %w", key, err)
	}
	v := m.vals[key]
	if !ok {
		v.exp = time.Time{}
	}
	if v.exp.IsZero() {
		v.exp = m.expiry(ttl)
	}
	v.v = []byte(strconv.FormatInt(n, 10))
	m.vals[key] = v
	return n, nil
}

// addDecimal adds delta to the decimal integer cur (absent: 0).
func addDecimal(cur []byte, present bool, delta int64) (int64, error) {
	var n int64
	if present {
		var err error
		n, err = strconv.ParseInt(string(cur), 10, 64)
		if err != nil {
			return 0, ErrNotInteger
		}
	}
	s := n + delta
	if (delta > 0 && s < n) || (delta < 0 && s > n) {
		return 0, fmt.Errorf("increment overflows int64: %w", ErrNotInteger)
	}
	return s, nil
}

func (m *Memory) Allow(ctx context.Context, key string, limit int64, period time.Duration) (Decision, error) {
	if limit <= 0 || period <= 0 {
		return Decision{}, fmt.Errorf("rate %d per %s: want both above zero", limit, period)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx); err != nil {
		return Decision{}, err
	}
	// GCRA, the same arithmetic as the Redis script: tat is the
	// theoretical arrival time of the next unit, kept in nanoseconds.
	now := m.now().UnixNano()
	interval := int64(period) / limit
	tolerance := int64(period) - interval
	tat := now
	if cur, ok := m.live("rate:" + key); ok {
		if t, err := strconv.ParseInt(string(cur), 10, 64); err == nil && t > now {
			tat = t
		}
	}
	if tat-now > tolerance {
		return Decision{RetryAfter: time.Duration(tat - now - tolerance)}, nil
	}
	tat += interval
	m.vals["rate:"+key] = memValue{v: []byte(strconv.FormatInt(tat, 10)), exp: time.Unix(0, tat)}
	return Decision{Allowed: true}, nil
}

func (m *Memory) Ping(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.check(ctx)
}

// Close ends every subscription; later calls fail with ErrUnavailable.
func (m *Memory) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	var all []*memSub
	for _, set := range m.subs {
		for s := range set {
			all = append(all, s)
		}
	}
	for _, s := range all {
		s.closeLocked()
	}
	m.mu.Unlock()
	for _, s := range all {
		s.finishClose()
	}
	return nil
}

// memSub is one subscription. Publish hands it messages through ch and
// blocks while its buffer is full, so no message is dropped; Close
// unblocks a waiting publisher, then closes ch once no publisher is
// sending (inflight counts them; it is added to under m.mu, only while
// the subscription is registered).
type memSub struct {
	m        *Memory
	chans    []string
	ch       chan Message
	done     chan struct{}
	inflight sync.WaitGroup
	once     sync.Once
	finish   sync.Once
}

func (s *memSub) C() <-chan Message { return s.ch }

func (s *memSub) Close() error {
	s.m.mu.Lock()
	s.closeLocked()
	s.m.mu.Unlock()
	s.finishClose()
	return nil
}

// closeLocked removes s from its channels and wakes its publishers;
// m.mu is held.
func (s *memSub) closeLocked() {
	s.once.Do(func() {
		for _, c := range s.chans {
			delete(s.m.subs[c], s)
		}
		close(s.done)
	})
}

// finishClose closes ch after the last publisher left; m.mu is not held.
func (s *memSub) finishClose() {
	s.finish.Do(func() {
		s.inflight.Wait()
		close(s.ch)
	})
}

func (m *Memory) Subscribe(ctx context.Context, channels ...string) (Subscription, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ctx); err != nil {
		return nil, err
	}
	s := &memSub{m: m, chans: slices.Clone(channels), ch: make(chan Message, 64), done: make(chan struct{})}
	for _, c := range channels {
		if m.subs[c] == nil {
			m.subs[c] = map[*memSub]struct{}{}
		}
		m.subs[c][s] = struct{}{}
	}
	return s, nil
}

func (m *Memory) Publish(ctx context.Context, channel string, payload []byte) error {
	m.mu.Lock()
	if err := m.check(ctx); err != nil {
		m.mu.Unlock()
		return err
	}
	targets := make([]*memSub, 0, len(m.subs[channel]))
	for s := range m.subs[channel] {
		s.inflight.Add(1)
		targets = append(targets, s)
	}
	m.mu.Unlock()
	var err error
	for _, s := range targets {
		if err == nil {
			select {
			case s.ch <- Message{Channel: channel, Payload: bytes.Clone(payload)}:
			case <-s.done:
			case <-ctx.Done():
				err = ctx.Err()
			}
		}
		s.inflight.Done()
	}
	return err
}

// memBucket is one namespace of a Memory store.
type memBucket struct {
	m     *Memory
	ns    string
	quota Quota
}

func (m *Memory) KV(ns string, quota Quota) Bucket { return &memBucket{m: m, ns: ns, quota: quota} }

// lock takes m.mu and returns the bucket's map, created on demand.
func (b *memBucket) lock(ctx context.Context) (map[string][]byte, error) {
	b.m.mu.Lock()
	if err := b.m.check(ctx); err != nil {
		b.m.mu.Unlock()
		return nil, err
	}
	kv := b.m.buckets[b.ns]
	if kv == nil {
		kv = map[string][]byte{}
		b.m.buckets[b.ns] = kv
	}
	return kv, nil
}

func usage(kv map[string][]byte) (keys, size int64) {
	for k, v := range kv {
		size += int64(len(k) + len(v))
	}
	return int64(len(kv)), size
}

// admit checks that writing value at key keeps the bucket within quota,
// by the rule the Redis script follows: a write that adds no key passes
// the key bound, and one that adds no bytes passes the byte bound, so a
// bucket over a lowered quota can still shrink.
func (b *memBucket) admit(kv map[string][]byte, key string, value []byte) error {
	keys, size := usage(kv)
	old, had := kv[key]
	delta := int64(len(value) - len(old))
	if !had {
		delta = int64(len(key) + len(value))
		if b.quota.MaxKeys > 0 && keys+1 > b.quota.MaxKeys {
			return &QuotaError{NS: b.ns, Limit: "keys", Max: b.quota.MaxKeys}
		}
	}
	if b.quota.MaxBytes > 0 && delta > 0 && size+delta > b.quota.MaxBytes {
		return &QuotaError{NS: b.ns, Limit: "bytes", Max: b.quota.MaxBytes}
	}
	return nil
}

func (b *memBucket) Get(ctx context.Context, key string) ([]byte, error) {
	kv, err := b.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer b.m.mu.Unlock()
	v, ok := kv[key]
	if !ok {
		return nil, fmt.Errorf("bucket %q key %q: %w", b.ns, key, ErrNotFound)
	}
	return bytes.Clone(v), nil
}

func (b *memBucket) Set(ctx context.Context, key string, value []byte) error {
	kv, err := b.lock(ctx)
	if err != nil {
		return err
	}
	defer b.m.mu.Unlock()
	if err := b.admit(kv, key, value); err != nil {
		return err
	}
	kv[key] = bytes.Clone(value)
	return nil
}

func (b *memBucket) Delete(ctx context.Context, key string) error {
	kv, err := b.lock(ctx)
	if err != nil {
		return err
	}
	defer b.m.mu.Unlock()
	delete(kv, key)
	return nil
}

func (b *memBucket) Exists(ctx context.Context, key string) (bool, error) {
	kv, err := b.lock(ctx)
	if err != nil {
		return false, err
	}
	defer b.m.mu.Unlock()
	_, ok := kv[key]
	return ok, nil
}

// Keys pages through the sorted keys; the cursor is the last key given.
func (b *memBucket) Keys(ctx context.Context, cursor string, limit int) ([]string, string, error) {
	kv, err := b.lock(ctx)
	if err != nil {
		return nil, "", err
	}
	defer b.m.mu.Unlock()
	if limit <= 0 {
		limit = 100
	}
	all := make([]string, 0, len(kv))
	for k := range kv {
		if cursor == "" || k > cursor {
			all = append(all, k)
		}
	}
	slices.Sort(all)
	if len(all) <= limit {
		return all, "", nil
	}
	page := all[:limit]
	return page, page[len(page)-1], nil
}

func (b *memBucket) Increment(ctx context.Context, key string, delta int64) (int64, error) {
	kv, err := b.lock(ctx)
	if err != nil {
		return 0, err
	}
	defer b.m.mu.Unlock()
	cur, ok := kv[key]
	n, err := addDecimal(cur, ok, delta)
	if err != nil {
		return 0, fmt.Errorf("bucket %q key %q: %w", b.ns, key, err)
	}
	v := []byte(strconv.FormatInt(n, 10))
	if err := b.admit(kv, key, v); err != nil {
		return 0, err
	}
	kv[key] = v
	return n, nil
}

func (b *memBucket) Usage(ctx context.Context) (int64, int64, error) {
	kv, err := b.lock(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer b.m.mu.Unlock()
	keys, size := usage(kv)
	return keys, size, nil
}
