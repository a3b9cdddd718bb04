package component

import (
	"context"
	"errors"
	"fmt"
)

// Limits bound what one component makes the host do for it. The sandbox
// sets them from the plugin's limits; zero values mean the defaults
// below.
type Limits struct {
	// ValueBytes bounds each crossing of the canonical ABI (a call's
	// arguments, or its result, in either direction), counted while the
	// value is lifted or lowered: lifting counts what the host allocates
	// (strings and byte lists at their length, SlotBytes for every other
	// element), lowering what it writes into the guest (a list at its
	// size in memory, lowerNode for every element). The crossing traps
	// before the count would pass the bound.
	// The sandbox uses the plugin's output limit. It also bounds the
	// total size of the tools' JSON Schemas (Tools).
	ValueBytes int64
	// HostBytes bounds the bytes the host holds for one instance's guest
	// between its calls: each live handle (handleBytes), wasi:http fields
	// and their clones, request and response bodies, request strings. A
	// host function that would pass it fails the call with a
	// *HostMemoryError. The sandbox uses the plugin's memory limit.
	HostBytes int64
}

// The defaults of [Limits] (the sandbox's default output and memory
// limits).
const (
	defaultValueBytes = 16 << 20
	defaultHostBytes  = 256 << 20
)

func (l Limits) valueBytes() int64 {
	if l.ValueBytes <= 0 {
		return defaultValueBytes
	}
	return l.ValueBytes
}

func (l Limits) hostBytes() int64 {
	if l.HostBytes <= 0 {
		return defaultHostBytes
	}
	return l.HostBytes
}

// SlotBytes is what one value costs the host beyond its bytes: a Go
// interface slot and its boxed scalar. Host functions count their own
// objects' entries so too.
const SlotBytes = 16

const (
	// lowerNode is what lowering one value counts beyond the memory it
	// writes (the host allocates nothing for it).
	lowerNode = 1
	// handleBytes is what one live handle costs the host: its table slot
	// and the object behind it.
	handleBytes = 64
	// ctxEvery is how often (in charges) a crossing checks its context;
	// a charge of ctxBytes or more checks it at once.
	ctxEvery = 1024
	ctxBytes = 64 << 10
)

// ValueBudgetError is a crossing of the canonical ABI whose value passed
// Limits.ValueBytes.
type ValueBudgetError struct {
	Limit int64
}

func (e *ValueBudgetError) Error() string {
	return fmt.Sprintf("canonical ABI: a value crossing between host and guest would pass %d bytes, the plugin's output limit "+
		"(strings and byte lists count their bytes; lifting counts 16 for each other element); a result or argument this large is refused while it is copied", e.Limit)
}

// budget counts one crossing's bytes and stops it at its context's end.
type budget struct {
	spent, limit int64
	ticks        int
}

// charge counts n bytes of the crossing c is making, before they are
// allocated or copied; it panics (as trap does) when they would pass the
// limit, or when the call's context has ended.
func (c *cx) charge(n int64) {
	b := &c.budget
	if n > b.limit-b.spent {
		panic(&ValueBudgetError{Limit: b.limit})
	}
	b.spent += n
	b.ticks++
	if n >= ctxBytes || b.ticks%ctxEvery == 0 {
		c.checkCtx()
	}
}

// checkCtx stops the crossing when the call's context has ended (its
// timeout, or the caller gave up).
func (c *cx) checkCtx() {
	if c.ctx == nil {
		return
	}
	if err := c.ctx.Err(); err != nil {
		panic(&stopped{err: context.Cause(c.ctx)})
	}
}

// newCrossing starts a fresh count: lifting a call's arguments and
// lowering its result are two crossings.
func (c *cx) newCrossing() { c.budget.spent, c.budget.ticks = 0, 0 }

// stopped is a crossing cut short by its context.
type stopped struct{ err error }

func (s *stopped) Error() string { return "canonical ABI: stopped: " + s.err.Error() }

func (s *stopped) Unwrap() error { return s.err }

// HostMemoryError is a host function that would make the host hold more
// for an instance than Limits.HostBytes.
type HostMemoryError struct {
	What  string // what was being added
	Need  int64  // the bytes it needed
	Held  int64  // the bytes already held
	Limit int64
}

func (e *HostMemoryError) Error() string {
	return fmt.Sprintf("host resources held for the guest would pass the plugin's memory limit of %d bytes "+
		"(%s needs %d bytes; %d already held by its handles, headers and bodies); drop resources the guest no longer needs, or raise memory",
		e.Limit, e.What, e.Need, e.Held)
}

// hostMem counts the bytes the host holds for one instance. It is used
// by one call at a time, as the instance is.
type hostMem struct {
	used, limit int64
}

// charge adds n bytes held for what, or panics with a *HostMemoryError
// (failing the call) when they would pass the limit.
func (m *hostMem) charge(what string, n int64) {
	if n <= 0 {
		return
	}
	if n > m.limit-m.used {
		panic(&HostMemoryError{What: what, Need: n, Held: m.used, Limit: m.limit})
	}
	m.used += n
}

// release gives back n bytes charged before.
func (m *hostMem) release(n int64) {
	m.used = max(m.used-n, 0)
}

// HostBytes returns the bytes the host holds for inst's guest now.
func (inst *Instance) HostBytes() int64 { return inst.mem.used }

// Charge counts n more bytes the host holds for inst's guest (a host
// object that grows: wasi:http's fields and bodies), saying what they
// are for. Past Limits.HostBytes it panics with a *HostMemoryError, which
// fails the call: call it only from a [HostFunc].
func (inst *Instance) Charge(what string, n int64) { inst.mem.charge(what, n) }

// Release gives back n bytes counted by Charge.
func (inst *Instance) Release(n int64) { inst.mem.release(n) }

// Sized is a host object behind a handle whose size is fixed when it is
// made (a directory listing, an error's message): the handle is charged
// HostBytes beside handleBytes while it lives. Objects that grow charge
// themselves ([Instance.Charge]).
type Sized interface{ HostBytes() int64 }

// objectBytes is what a handle's object holds when that is fixed at its
// creation ([Sized]).
func objectBytes(v any) int64 {
	if s, ok := v.(Sized); ok {
		return s.HostBytes()
	}
	return 0
}

// Cause returns the error a component's call failed with as this
// package made it (a *Trap, *ValueBudgetError or *HostMemoryError),
// taking it out of wazero's wrapping when a host function failed; or err.
func Cause(err error) error {
	var t *Trap
	var vb *ValueBudgetError
	var hm *HostMemoryError
	switch {
	case errors.As(err, &t):
		return t
	case errors.As(err, &vb):
		return vb
	case errors.As(err, &hm):
		return hm
	}
	return err
}
