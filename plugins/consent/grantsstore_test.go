package consent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/redistest"
	"github.com/mcphost/mcphost/plugins/store"
	"github.com/mcphost/mcphost/sandbox"
)

// grantBackends are the stores grants are tested on: two handles on one
// store, as two replicas hold them.
func grantBackends(t *testing.T) map[string]func(t *testing.T) (a, b store.Store, srv *redistest.Server) {
	return map[string]func(t *testing.T) (store.Store, store.Store, *redistest.Server){
		"memory": func(t *testing.T) (store.Store, store.Store, *redistest.Server) {
			m := store.NewMemory()
			t.Cleanup(func() { m.Close() })
			return m, m, nil
		},
		"redis": func(t *testing.T) (store.Store, store.Store, *redistest.Server) {
			srv := redistest.Start(t)
			return openTestStore(t, srv.URL()), openTestStore(t, srv.URL()), srv
		},
	}
}

func openTestStore(t *testing.T, url string) store.Store {
	t.Helper()
	s, err := store.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestGrantsStoreConcurrent: 8 allow_always answers given at once on two
// replicas (two Grants on two handles of one store) are all kept, and
// each replica honours every one of them at once; a revoke on one stands
// on the other at its next check.
func TestGrantsStoreConcurrent(t *testing.T) {
	for name, open := range grantBackends(t) {
		t.Run(name, func(t *testing.T) {
			a, b, _ := open(t)
			replicas := []*Grants{StoreGrants(a, "test-a"), StoreGrants(b, "test-b")}
			ctx := t.Context()
			now := time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			start := make(chan struct{})
			for i := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					r := sandbox.Reach{Plugin: "fetch", Host: fmt.Sprintf("h%d.example", i), Port: 443}
					errs <- replicas[i%2].Grant(ctx, r, testCode, now)
				}()
			}
			close(start)
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			for ri, g := range replicas {
				for i := range 8 {
					r := sandbox.Reach{Plugin: "fetch", Host: fmt.Sprintf("h%d.example", i), Port: 443}
					if ok, err := g.HasContext(ctx, r, testCode); !ok || err != nil {
						t.Errorf("replica %d: grant %d: %v, %v; want it kept", ri, i, ok, err)
					}
				}
				if n := len(g.List()); n != 8 {
					t.Errorf("replica %d lists %d grants; want 8", ri, n)
				}
			}
			gone, err := replicas[0].Revoke(ctx, "fetch", "h3.example:443")
			if err != nil || len(gone) != 1 {
				t.Fatalf("revoke: %v, %v", gone, err)
			}
			r3 := sandbox.Reach{Plugin: "fetch", Host: "h3.example", Port: 443}
			if ok, err := replicas[1].HasContext(ctx, r3, testCode); ok || err != nil {
				t.Errorf("the other replica after a revoke: %v, %v; want no grant", ok, err)
			}
			if ok, _ := replicas[1].HasContext(ctx, r3, Code{Digest: "sha256:" + strings.Repeat("0", 64)}); ok {
				t.Errorf("a grant stands for other code")
			}
		})
	}
}

// TestGrantsStoreDown: with Redis down a grant is neither read nor kept,
// and both say which store; once Redis is back (empty: a fresh server),
// the same handles work again without being reopened.
func TestGrantsStoreDown(t *testing.T) {
	srv := redistest.Start(t)
	g := StoreGrants(openTestStore(t, srv.URL()), store.Redact(srv.URL()))
	ctx := t.Context()
	r := sandbox.Reach{Plugin: "fetch", Host: "a.example", Port: 443}
	if err := g.Grant(ctx, r, testCode, time.Now()); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ok, err := g.HasContext(cctx, r, testCode)
	if ok || !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), srv.URL()) {
		t.Errorf("check with Redis down: %v, %v; want no grant and ErrUnavailable naming %s", ok, err, srv.URL())
	}
	err = g.Grant(cctx, sandbox.Reach{Plugin: "fetch", Host: "b.example", Port: 443}, testCode, time.Now())
	if !errors.Is(err, store.ErrUnavailable) || !strings.Contains(err.Error(), srv.URL()) {
		t.Errorf("grant with Redis down: %v; want ErrUnavailable naming the store", err)
	}
	srv.Restart()
	if err := g.Grant(ctx, r, testCode, time.Now()); err != nil {
		t.Fatalf("grant after Redis restarted: %v", err)
	}
	if ok, err := g.HasContext(ctx, r, testCode); !ok || err != nil {
		t.Errorf("check after Redis restarted: %v, %v; want the new grant", ok, err)
	}
}

// FuzzDecodeGrants: what the store's grants key holds (anyone who can
// write the store can write it) is parsed without panicking, and what
// parses is written back to the same grants.
func FuzzDecodeGrants(f *testing.F) {
	f.Add([]byte("[[grant]]\nplugin = \"fetch\"\nhost = \"a.example:443\"\ncode = \"sha256:" + strings.Repeat("ab", 32) + "\"\ngranted = 2026-11-28T06:00:00Z\n"))
	f.Add([]byte("[[grant]]\nplugin = \"files\"\npath = \"/srv\"\naccess = \"write\"\ngranted = 2026-11-28T06:00:00Z\n"))
	f.Add([]byte("[[grant]\nplugin = "))
	f.Fuzz(func(t *testing.T, b []byte) {
		list, err := decodeGrants(b, "fuzz")
		if err != nil {
			return
		}
		enc, err := encodeGrants(list)
		if err != nil {
			t.Fatalf("encode what decoded: %v", err)
		}
		back, err := decodeGrants(enc, "fuzz")
		if err != nil || len(back) != len(list) {
			t.Fatalf("round trip: %d grants, %v; want %d", len(back), err, len(list))
		}
	})
}
