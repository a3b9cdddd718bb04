package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/redistest"
	"github.com/mcphost/mcphost/store"
)

// backends opens each implementation fresh for one subtest. The Redis
// one gets a private redis-server (skipped without one, failed under
// CI=true); two handles on it stand for two replicas.
type backend struct {
	name string
	// open returns two handles on one shared store, as two replicas
	// see it.
	open func(t *testing.T) (a, b store.Store)
}

func backends() []backend {
	return []backend{
		{"memory", func(t *testing.T) (store.Store, store.Store) {
			m := store.NewMemory()
			t.Cleanup(func() { m.Close() })
			return m, m
		}},
		{"redis", func(t *testing.T) (store.Store, store.Store) {
			srv := redistest.Start(t)
			return openRedis(t, srv.URL()), openRedis(t, srv.URL())
		}},
	}
}

func openRedis(t *testing.T, url string) store.Store {
	t.Helper()
	s, err := store.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// contract runs fn against every backend.
func contract(t *testing.T, fn func(t *testing.T, a, b store.Store)) {
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			a, b := be.open(t)
			fn(t, a, b)
		})
	}
}

func TestRecords(t *testing.T) {
	contract(t, func(t *testing.T, a, b store.Store) {
		ctx := t.Context()
		if _, err := b.Get(ctx, "task:1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("get absent: got %v; want ErrNotFound", err)
		}
		if err := a.Set(ctx, "task:1", []byte("working"), time.Minute); err != nil {
			t.Fatal(err)
		}
		got, err := b.Get(ctx, "task:1")
		if err != nil || string(got) != "working" {
			t.Fatalf("other replica reads %q, %v; want working", got, err)
		}
		ok, err := b.Delete(ctx, "task:1")
		if err != nil || !ok {
			t.Fatalf("delete: %v, %v; want true", ok, err)
		}
		ok, err = a.Delete(ctx, "task:1")
		if err != nil || ok {
			t.Fatalf("second delete: %v, %v; want false", ok, err)
		}
	})
}

// TestExpiry waits for a TTL by watching the key, not the clock: it
// reads until the key is gone, bounded by a deadline far longer than the
// TTL.
func TestExpiry(t *testing.T) {
	contract(t, func(t *testing.T, a, b store.Store) {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if err := a.Set(ctx, "short", []byte("x"), 20*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := a.Set(ctx, "long", []byte("y"), time.Hour); err != nil {
			t.Fatal(err)
		}
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			_, err := b.Get(ctx, "short")
			if errors.Is(err, store.ErrNotFound) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-ctx.Done():
				t.Fatal("a key with a 20ms TTL still there after 10s")
			case <-tick.C:
			}
		}
		if v, err := b.Get(ctx, "long"); err != nil || string(v) != "y" {
			t.Fatalf("long-lived key: %q, %v", v, err)
		}
	})
}

func TestCompareAndSwap(t *testing.T) {
	contract(t, func(t *testing.T, a, b store.Store) {
		ctx := t.Context()
		steps := []struct {
			s         store.Store
			old, next []byte
			want      bool
			after     string // "" absent
		}{
			{a, nil, []byte("v1"), true, "v1"},
			{b, nil, []byte("v2"), false, "v1"},
			{b, []byte("v0"), []byte("v2"), false, "v1"},
			{b, []byte("v1"), []byte("v2"), true, "v2"},
			{a, []byte("v1"), nil, false, "v2"},
			{a, []byte("v2"), nil, true, ""},
			{a, []byte("v2"), []byte("v3"), false, ""},
		}
		for i, st := range steps {
			ok, err := st.s.CompareAndSwap(ctx, "cas", st.old, st.next, 0)
			if err != nil {
				t.Fatalf("step %d: %v", i, err)
			}
			if ok != st.want {
				t.Fatalf("step %d (old %q next %q): got %v; want %v", i, st.old, st.next, ok, st.want)
			}
			v, err := a.Get(ctx, "cas")
			if st.after == "" && !errors.Is(err, store.ErrNotFound) || st.after != "" && string(v) != st.after {
				t.Fatalf("step %d: value %q, %v; want %q", i, v, err, st.after)
			}
		}
	})
}

// TestUpdateConcurrent is the grants case: 8 writers on two replicas each
// add their own entry to one record; every entry must be kept.
func TestUpdateConcurrent(t *testing.T) {
	contract(t, func(t *testing.T, a, b store.Store) {
		ctx := t.Context()
		const n = 8
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			s := alternate(i, a, b)
			wg.Go(func() {
				_, err := store.Update(ctx, s, "grants", 0, func(old []byte) ([]byte, error) {
					return fmt.Appendf(slices.Clone(old), "%d;", i), nil
				})
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		v, err := a.Get(ctx, "grants")
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if !slices.Contains(splitEntries(string(v)), strconv.Itoa(i)) {
				t.Errorf("entry %d lost: record %q", i, v)
			}
		}
	})
}

// alternate picks a for even i, b for odd: work spread over two replicas.
func alternate[T any](i int, a, b T) T {
	if i%2 == 1 {
		return b
	}
	return a
}

func splitEntries(s string) []string {
	var out []string
	for len(s) > 0 {
		i := 0
		for i < len(s) && s[i] != ';' {
			i++
		}
		out = append(out, s[:i])
		if i < len(s) {
			i++
		}
		s = s[i:]
	}
	return out
}

func TestIncr(t *testing.T) {
	contract(t, func(t *testing.T, a, b store.Store) {
		ctx := t.Context()
		var wg sync.WaitGroup
		for i := range 20 {
			s := alternate(i, a, b)
			wg.Go(func() {
				if _, err := s.Incr(ctx, "n", 1, time.Minute); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		n, err := b.Incr(ctx, "n", -5, time.Minute)
		if err != nil || n != 15 {
			t.Fatalf("got %d, %v; want 15", n, err)
		}
		if err := a.Set(ctx, "word", []byte("abc"), 0); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Incr(ctx, "word", 1, 0); !errors.Is(err, store.ErrNotInteger) {
			t.Fatalf("incr on a word: got %v; want ErrNotInteger", err)
		}
	})
}

// TestAllow spends a burst across two replicas: exactly limit units are
// given, then the next is refused with a wait no longer than the period.
func TestAllow(t *testing.T) {
	contract(t, func(t *testing.T, a, b store.Store) {
		ctx := t.Context()
		const limit = 10
		allowed := 0
		var last store.Decision
		for i := range 2 * limit {
			s := alternate(i, a, b)
			d, err := s.Allow(ctx, "user-1", limit, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed {
				allowed++
			} else {
				last = d
			}
		}
		if allowed != limit {
			t.Fatalf("allowed %d of %d in one burst; want %d", allowed, 2*limit, limit)
		}
		if last.RetryAfter <= 0 || last.RetryAfter > time.Hour {
			t.Fatalf("retry after %s; want within (0, 1h]", last.RetryAfter)
		}
		d, err := b.Allow(ctx, "user-2", limit, time.Hour)
		if err != nil || !d.Allowed {
			t.Fatalf("another identity: %+v, %v; want allowed", d, err)
		}
		if _, err := a.Allow(ctx, "x", 0, time.Second); err == nil {
			t.Fatal("a zero limit was accepted")
		}
	})
}

func TestPubSub(t *testing.T) {
	contract(t, func(t *testing.T, a, b store.Store) {
		ctx := t.Context()
		sub, err := b.Subscribe(ctx, "replica:r1", "lists")
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		other, err := a.Subscribe(ctx, "replica:r2")
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		for i := range 5 {
			if err := a.Publish(ctx, "replica:r1", []byte("cancel "+strconv.Itoa(i))); err != nil {
				t.Fatal(err)
			}
		}
		if err := a.Publish(ctx, "lists", []byte("tools")); err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			m := recv(t, sub)
			if m.Channel != "replica:r1" || string(m.Payload) != "cancel "+strconv.Itoa(i) {
				t.Fatalf("message %d: %+v", i, m)
			}
		}
		if m := recv(t, sub); m.Channel != "lists" || string(m.Payload) != "tools" {
			t.Fatalf("got %+v; want lists/tools", m)
		}
		// r2 got nothing: a marker published after shows it first.
		if err := b.Publish(ctx, "replica:r2", []byte("marker")); err != nil {
			t.Fatal(err)
		}
		if m := recv(t, other); string(m.Payload) != "marker" {
			t.Fatalf("replica:r2 got %+v first; want the marker", m)
		}
		if err := sub.Close(); err != nil {
			t.Fatal(err)
		}
		for range sub.C() { // drains; ends because Close closes C
		}
	})
}

func recv(t *testing.T, sub store.Subscription) store.Message {
	t.Helper()
	select {
	case m, ok := <-sub.C():
		if !ok {
			t.Fatal("subscription closed")
		}
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("no message within 10s")
	}
	return store.Message{}
}

func TestBucket(t *testing.T) {
	contract(t, func(t *testing.T, a, b store.Store) {
		ctx := t.Context()
		q := store.Quota{MaxKeys: 3, MaxBytes: 40}
		pa, pb := a.KV("counter", q), b.KV("counter", q)
		other := a.KV("other", q)
		if err := pa.Set(ctx, "k1", []byte("hello")); err != nil {
			t.Fatal(err)
		}
		if v, err := pb.Get(ctx, "k1"); err != nil || string(v) != "hello" {
			t.Fatalf("other replica: %q, %v", v, err)
		}
		if _, err := other.Get(ctx, "k1"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another namespace sees k1: %v", err)
		}
		if ok, err := pb.Exists(ctx, "k1"); err != nil || !ok {
			t.Fatalf("exists: %v, %v", ok, err)
		}
		if ok, err := pb.Exists(ctx, "k9"); err != nil || ok {
			t.Fatalf("exists k9: %v, %v", ok, err)
		}
		// 7 bytes used. 40 bytes: a 34-byte write (k2 + 32) crosses.
		var qe *store.QuotaError
		if err := pa.Set(ctx, "k2", make([]byte, 32)); !errors.As(err, &qe) || qe.Limit != "bytes" || !errors.Is(err, store.ErrQuota) {
			t.Fatalf("over the byte quota: got %v; want a bytes QuotaError", err)
		}
		if err := pa.Set(ctx, "k2", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if err := pa.Set(ctx, "k3", []byte("y")); err != nil {
			t.Fatal(err)
		}
		if err := pb.Set(ctx, "k4", []byte("z")); !errors.As(err, &qe) || qe.Limit != "keys" {
			t.Fatalf("a 4th key: got %v; want a keys QuotaError", err)
		}
		keys, size, err := pb.Usage(ctx)
		if err != nil || keys != 3 || size != 7+3+3 {
			t.Fatalf("usage %d keys %d bytes, %v; want 3, 13", keys, size, err)
		}
		if err := pa.Delete(ctx, "k2"); err != nil {
			t.Fatal(err)
		}
		if err := pa.Delete(ctx, "k2"); err != nil {
			t.Fatalf("deleting an absent key: %v", err)
		}
		if keys, size, _ := pa.Usage(ctx); keys != 2 || size != 10 {
			t.Fatalf("after delete: %d keys %d bytes; want 2, 10", keys, size)
		}
		// A counter counts 1…N across replicas.
		var wg sync.WaitGroup
		for i := range 20 {
			p := alternate(i, pa, pb)
			wg.Go(func() {
				if _, err := p.Increment(ctx, "n", 1); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if n, err := pb.Increment(ctx, "n", 0); err != nil || n != 20 {
			t.Fatalf("counter %d, %v; want 20", n, err)
		}
		if _, err := pa.Increment(ctx, "k1", 1); !errors.Is(err, store.ErrNotInteger) {
			t.Fatalf("increment on a word: %v; want ErrNotInteger", err)
		}
		// A new key through Increment still counts against the key bound.
		if _, err := pa.Increment(ctx, "m", 1); !errors.As(err, &qe) || qe.Limit != "keys" {
			t.Fatalf("increment of a 4th key: %v; want a keys QuotaError", err)
		}
		if v, _ := pa.Get(ctx, "k1"); string(v) != "hello" {
			t.Fatalf("k1 changed to %q by a refused increment", v)
		}
	})
}

func TestBucketKeys(t *testing.T) {
	contract(t, func(t *testing.T, a, b store.Store) {
		ctx := t.Context()
		p := a.KV("lister", store.Quota{})
		want := map[string]bool{}
		for i := range 300 {
			k := fmt.Sprintf("key-%03d", i)
			want[k] = true
			if err := p.Set(ctx, k, []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		got := map[string]bool{}
		cursor, pages := "", 0
		for {
			keys, next, err := b.KV("lister", store.Quota{}).Keys(ctx, cursor, 50)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, k := range keys {
				got[k] = true
			}
			if next == "" {
				break
			}
			cursor = next
			if pages > 1000 {
				t.Fatal("the cursor never ends")
			}
		}
		if len(got) != len(want) {
			t.Fatalf("listed %d distinct keys; want %d", len(got), len(want))
		}
	})
}

func TestClosed(t *testing.T) {
	m := store.NewMemory()
	sub, err := m.Subscribe(t.Context(), "c")
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	if _, ok := <-sub.C(); ok {
		t.Fatal("a subscription outlived its store")
	}
	if err := m.Set(t.Context(), "k", nil, 0); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("set on a closed store: %v; want ErrUnavailable", err)
	}
}

// TestRedisRestart: after the server restarts (empty, as without
// persistence), the same handles serve again and a subscription made
// before the restart receives again, with no action by the caller.
// While it is down, calls fail with ErrUnavailable.
func TestRedisRestart(t *testing.T) {
	srv := redistest.Start(t)
	a, b := openRedis(t, srv.URL()), openRedis(t, srv.URL())
	ctx := t.Context()
	sub, err := b.Subscribe(ctx, "lists")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	srv.Stop()
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := a.Get(dctx, "k"); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("get with Redis down: %v; want ErrUnavailable", err)
	}
	if err := a.Publish(dctx, "lists", []byte("lost")); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("publish with Redis down: %v; want ErrUnavailable", err)
	}
	srv.Restart()
	if err := a.Set(ctx, "k", []byte("v"), 0); err != nil {
		t.Fatalf("set after the restart: %v", err)
	}
	// The subscription comes back on go-redis's health check; publish
	// until it delivers, bounded.
	deadline := time.After(30 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := a.Publish(ctx, "lists", []byte("back")); err != nil {
			t.Fatal(err)
		}
		select {
		case m, ok := <-sub.C():
			if !ok {
				t.Fatal("the subscription closed on a restart")
			}
			if string(m.Payload) != "back" {
				t.Fatalf("got %q; want back", m.Payload)
			}
			return
		case <-deadline:
			t.Fatal("the subscription did not resubscribe within 30s of the restart")
		case <-tick.C:
		}
	}
}

func TestParseRedisURL(t *testing.T) {
	tests := []struct {
		url     string
		addrs   []string
		master  string
		cluster bool
		db      int
		tls     bool
		wantErr bool
	}{
		{url: "redis://localhost:6379/2", addrs: []string{"localhost:6379"}, db: 2},
		{url: "rediss://:pw@cache.example:6380/0", addrs: []string{"cache.example:6380"}, tls: true},
		{url: "redis://s1:26379?master_name=mymaster&addr=s2:26379", addrs: []string{"s1:26379", "s2:26379"}, master: "mymaster"},
		{url: "redis://n1:7000?addr=n2:7000&addr=n3:7000", addrs: []string{"n1:7000", "n2:7000", "n3:7000"}},
		{url: "redis://n1:7000?cluster=true", addrs: []string{"n1:7000"}, cluster: true},
		{url: "redis://n1:7000/3?addr=n2:7000", wantErr: true},
		{url: "redis://n1:7000?cluster=maybe", wantErr: true},
		{url: "redis://n1:7000?bogus=1", wantErr: true},
		{url: "http://n1:7000", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			o, err := store.ParseRedisURL(tt.url)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("got %+v; want an error", o)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(o.Addrs, tt.addrs) || o.MasterName != tt.master || o.IsClusterMode != tt.cluster || o.DB != tt.db || (o.TLSConfig != nil) != tt.tls {
				t.Fatalf("got addrs %v master %q cluster %v db %d tls %v", o.Addrs, o.MasterName, o.IsClusterMode, o.DB, o.TLSConfig != nil)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	s, err := store.Open("")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(*store.Memory); !ok {
		t.Fatalf("no URL gave %T; want *store.Memory", s)
	}
	if _, err := store.Open("memcached://x"); err == nil {
		t.Fatal("a memcached URL was accepted")
	}
	srv := redistest.Start(t, "--requirepass", "s3cret")
	for _, tt := range []struct {
		password string
		ok       bool
	}{{"", false}, {"wrong", false}, {"s3cret", true}} {
		t.Setenv(store.EnvPassword, tt.password)
		s, err := store.Open(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		err = s.Ping(t.Context())
		s.Close()
		if tt.ok && err != nil || !tt.ok && !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s=%q: ping %v; want ok=%v (else ErrUnavailable)", store.EnvPassword, tt.password, err, tt.ok)
		}
	}
	if got := store.Redact("rediss://app:hunter2@cache:6380/0"); got != "rediss://app:xxxxx@cache:6380/0" {
		t.Errorf("redact: %s", got)
	}
}
