package sandbox

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/abi"
)

// Cancellation asks first. When a call's request ends before the call
// returns (the client cancelled it, its connection closed, its deadline
// passed), the guest is told and given Limits.CancelGrace to return; only
// a guest still running after it is stopped, which costs its instance and
// the state it held. On a polled instance the callClock runs the grace
// (callclock.go); under close-on-done, graceCall does.

// callModule is mcphost's call-status extension (abi.CallNamespace).
const callModule = abi.CallNamespace

// callHostModule defines abi.CallCancelled: 1 once the call's request
// has ended, else 0.
func callHostModule(hb wazero.HostModuleBuilder) wazero.HostModuleBuilder {
	hb.NewFunctionBuilder().WithGoFunction(api.GoFunc(func(ctx context.Context, s []uint64) {
		s[0] = 0
		if requestEnded(ctx) {
			s[0] = 1
		}
	}), nil, []api.ValueType{i32}).Export(abi.CallCancelled)
	return hb
}

// requestEnded says the request of the call ctx serves has ended. A
// polled call's context is done from that moment; a graceCall's only when
// its grace has run, so it is asked too.
func requestEnded(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	g, _ := ctx.Value(graceKey{}).(*graceCall)
	return g != nil && g.cancelled()
}

// graceKey finds a call's graceCall in its context.
type graceKey struct{}

// graceCall is the context of a call under wazero's close-on-done, which
// closes the instance the moment the context is done: it ends at the
// call's own deadline, or grace after the request ends, whichever is
// first. Host functions that block on it are bounded the same way.
type graceCall struct {
	context.Context // the request's values, the call's own deadline
	parent          context.Context
	cancel          context.CancelFunc
	stopWatch       func() bool

	mu    sync.Mutex
	told  bool
	timer *time.Timer // the grace, once told
}

// withGrace returns the context of a close-on-done call bounded by d and
// by parent's end plus grace, and the function that ends it.
func withGrace(parent context.Context, d, grace time.Duration) (*graceCall, func()) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), d)
	g := &graceCall{Context: ctx, parent: parent, cancel: cancel}
	g.stopWatch = context.AfterFunc(parent, func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		if ctx.Err() == nil {
			g.told = true
			g.timer = time.AfterFunc(grace, cancel)
		}
	})
	return g, g.finish
}

func (g *graceCall) Value(key any) any {
	if key == (graceKey{}) {
		return g
	}
	return g.Context.Value(key)
}

// cancelled says the request has ended: the guest may hear it (through
// its Peer, say) before the AfterFunc that starts the grace has run.
func (g *graceCall) cancelled() bool {
	g.mu.Lock()
	told := g.told
	g.mu.Unlock()
	return told || g.parent.Err() != nil
}

// finish ends the call: no timer or AfterFunc of it runs any more.
func (g *graceCall) finish() {
	g.stopWatch()
	g.mu.Lock()
	if g.timer != nil {
		g.timer.Stop()
	}
	g.mu.Unlock()
	g.cancel()
}

// cancelState says whether the request of the call ctx bounds had ended
// when the call returned (told), and whether the guest was then
// interrupted (stopped). Asked before the call's context is finished.
func cancelState(ctx context.Context) (told, stopped bool) {
	switch c := ctx.(type) {
	case *callClock:
		// The guest may have heard of the request's end (through its
		// Peer, say) before the clock did; Err asks the request.
		c.Err()
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.told, c.told && c.stopping
	case *graceCall:
		told := c.cancelled()
		return told, told && c.Context.Err() != nil
	}
	return false, false
}

// afterCancel is the outcome of a call whose request ended while it ran:
// a KindCanceled error whatever the guest returned (nobody waits for its
// result), and a log line saying whether the instance was kept (the guest
// returned within the grace, or failed on its own and is discarded as
// any failed instance is) or stopped after the grace. keep says the
// instance goes back to the pool.
func (m *Module) afterCancel(ctx context.Context, export string, ce *CallError, keep, stopped bool) *CallError {
	switch {
	case keep:
		m.log.Info("cancelled call returned within the grace: instance and its state kept", "export", export,
			"grace", m.lim.CancelGrace)
		return m.fail(export, KindCanceled, context.Cause(ctx).Error()+"; the guest returned within the cancel grace", nil)
	case stopped:
		m.log.Warn("cancelled call did not return within the grace: instance stopped and replaced", "export", export,
			"grace", m.lim.CancelGrace, "key", "cancel_grace")
		ce.Detail = fmt.Sprintf("%s; the guest did not return within the cancel grace (%s) and was stopped", context.Cause(ctx), m.lim.CancelGrace)
		return ce
	}
	m.log.Warn("instance discarded", "export", export, "kind", ce.Kind.String(), "err", ce.Detail)
	return ce
}
