package plugins

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

func TestRegistryBasics(t *testing.T) {
	ctx := context.Background()
	r := NewRegistry()
	g0, rel0 := r.Acquire()
	if g0 == nil || len(g0.Tools) != 0 || g0.Config == nil {
		t.Fatalf("Acquire before Swap: got %+v; want an empty generation with a config", g0)
	}
	rel0()
	select {
	case <-r.Ready():
		t.Fatal("Ready closed before the first Swap")
	default:
	}

	var got []Changes
	cancel := r.Subscribe(func(c Changes) { got = append(got, c) })
	l := NewLoader(LoaderOptions{Logger: discard()})
	m1 := fake{tools: []string{tool("a")}}.module()
	g1 := build(t, l, nil, native("p", m1))
	c := r.Swap(ctx, g1)
	if !c.Tools || !reflect.DeepEqual(c.Reloaded, []string{"p"}) {
		t.Errorf("Swap(g1): got %+v; want tools changed and p reloaded", c)
	}
	select {
	case <-r.Ready():
	default:
		t.Fatal("Ready not closed after the first Swap")
	}
	held, release := r.Acquire()
	if held != g1 {
		t.Fatalf("Acquire after Swap(g1): got generation %d; want %d", held.ID, g1.ID)
	}

	m2 := fake{tools: []string{tool("b")}}.module()
	g2 := build(t, l, g1, native("p", m2))
	r.Swap(ctx, g2)
	if now, rel := r.Acquire(); now != g2 {
		t.Errorf("Acquire after Swap(g2): got generation %d; want %d", now.ID, g2.ID)
	} else {
		rel()
	}
	// g1 is still held: its module stays open and still answers.
	if n := m1.closes.Load(); n != 0 {
		t.Fatalf("g1's module closed %d times while held; want 0", n)
	}
	if _, err := held.Tool("p_a").Run(ctx, nil, nil, abi.Context{}); err != nil {
		t.Errorf("call on the held old generation: %v", err)
	}
	release()
	release() // a second release does nothing
	if n := m1.closes.Load(); n != 1 {
		t.Errorf("g1's module closed %d times after its last release; want 1", n)
	}
	if c := r.Swap(ctx, g2); c.Any() {
		t.Errorf("Swap of the current generation: got %+v; want no changes", c)
	}
	cancel()
	r.Close(ctx)
	if n := m2.closes.Load(); n != 1 {
		t.Errorf("g2's module closed %d times after Registry.Close; want 1", n)
	}
	if len(got) != 2 || !got[1].Tools {
		t.Errorf("subscriber heard %+v; want two changes (the Close after cancel is not heard)", got)
	}
}

// TestRegistryHammer runs calls while generations are swapped underneath:
// every call finishes on the generation it acquired (whose module must
// still be open), and every generation's module closes exactly once.
func TestRegistryHammer(t *testing.T) {
	ctx := context.Background()
	const swaps, readers = 200, 8
	r := NewRegistry()
	l := NewLoader(LoaderOptions{Logger: discard()})
	var (
		mods  []*fakeModule
		stop  atomic.Bool
		calls atomic.Int64
		wg    sync.WaitGroup
		errs  = make(chan error, readers)
	)
	for i := 0; i < readers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() || calls.Load() == 0 {
				g, release := r.Acquire()
				for _, tl := range g.Tools {
					if _, err := tl.Run(ctx, nil, nil, abi.Context{}); err != nil {
						errs <- fmt.Errorf("generation %d: %w", g.ID, err)
						release()
						return
					}
					calls.Add(1)
				}
				release()
			}
		}()
	}
	var prev *Generation
	for i := 0; i < swaps; i++ {
		m := fake{tools: []string{tool(fmt.Sprintf("t%d", i)), tool("same")}}.module()
		mods = append(mods, m)
		g := build(t, l, prev, native("p", m))
		r.Swap(ctx, g)
		prev = g
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	r.Close(ctx)
	for i, m := range mods {
		if n := m.closes.Load(); n != 1 {
			t.Errorf("generation %d: module closed %d times; want 1", i, n)
		}
	}
	if calls.Load() == 0 {
		t.Error("no calls ran")
	}
}

func TestRegistrySubscribeOrder(t *testing.T) {
	r := NewRegistry()
	var order []string
	for _, name := range []string{"first", "second", "third"} {
		r.Subscribe(func(Changes) { order = append(order, name) })
	}
	l := NewLoader(LoaderOptions{Logger: discard()})
	r.Swap(context.Background(), build(t, l, nil, native("p", fake{tools: []string{tool("x")}}.module())))
	if want := []string{"first", "second", "third"}; !reflect.DeepEqual(order, want) {
		t.Errorf("subscribers ran in order %q; want %q", order, want)
	}
	r.Close(context.Background())
}
