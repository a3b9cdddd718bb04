package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tetratelabs/wazero/sys"

	"github.com/mcphost/mcphost/sandbox/internal/component"
)

// classify sorts the outcome of one call into a *CallError, or nil
// for success. ctx is the caller's context and callCtx the per-call one
// derived from it with the module's timeout. plain means rc is the export's
// i32 result rather than an Extism status.
//
// The order matters: an ExitError carries its own cause; a guest error is
// recognised by asking the kernel for the message the guest set; a failure
// while a context is done (a host function whose request was cut short) is
// a timeout or a cancellation, whatever its error says; only then are
// traps and host-function panics told apart.
func (m *Module) classify(ctx, callCtx context.Context, inst *instance, export string, rc uint32, out []byte, err error, plain bool) *CallError {
	if m.killed.Load() {
		return m.fail(export, KindClosed, "stopped by Close", err)
	}
	if err == nil {
		if !plain && rc != 0 {
			return m.fail(export, KindGuestError, fmt.Sprintf("returned %d without an error message", rc), nil)
		}
		if len(out) > m.lim.MaxOutputBytes {
			return m.fail(export, KindBadOutput, fmt.Sprintf("%d bytes, limit %d", len(out), m.lim.MaxOutputBytes), nil)
		}
		return nil
	}

	var exit *sys.ExitError
	if errors.As(err, &exit) {
		switch exit.ExitCode() {
		case sys.ExitCodeDeadlineExceeded, sys.ExitCodeContextCanceled:
			return m.contextError(ctx, export, err)
		default:
			return m.fail(export, KindExit, fmt.Sprintf("exit code %d", exit.ExitCode()), err)
		}
	}
	if msg := inst.g.GuestError(); msg != "" && (err.Error() == msg || strings.HasPrefix(err.Error(), msg+"\n")) {
		return m.fail(export, KindGuestError, truncate(msg), err)
	}
	if hm := (*component.HostMemoryError)(nil); errors.As(err, &hm) {
		// What the host held for a component's guest passed the memory
		// limit; the instance, and all it held, is dropped.
		return m.fail(export, KindOutOfMemory, hm.Error(), err)
	}
	if ctx.Err() != nil || callCtx.Err() != nil {
		return m.contextError(ctx, export, err)
	}
	detail := firstLine(err.Error())
	if stderr := inst.stderr.summary(); stderr != "" {
		detail += "; stderr: " + stderr
	}
	switch {
	case isTrap(err) && inst.stderr.outOfMemory():
		return m.fail(export, KindOutOfMemory, detail, err)
	case isTrap(err):
		return m.fail(export, KindTrap, detail, err)
	case strings.Contains(err.Error(), "(recovered by wazero)"):
		return m.fail(export, KindHostPanic, detail, err)
	default:
		// For example "failed to initialize runtime: …", whose cause go-sdk
		// formats with %v. The instance is not to be trusted.
		return m.fail(export, KindTrap, detail, err)
	}
}

// contextError tells a cancellation by the caller from the call's own
// timeout.
func (m *Module) contextError(ctx context.Context, export string, err error) *CallError {
	if ctx.Err() != nil {
		return m.fail(export, KindCanceled, context.Cause(ctx).Error(), err)
	}
	return m.fail(export, KindTimeout, fmt.Sprintf("exceeded %v", m.lim.Timeout), err)
}

// isTrap reports whether err wraps wazero's runtime error (unreachable,
// out-of-bounds access, division by zero, stack overflow, …). Its package is
// internal, so the type is matched by name.
func isTrap(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if fmt.Sprintf("%T", e) == "*wasmruntime.Error" {
			return true
		}
	}
	return false
}

// firstLine drops wazero's "wasm stack trace:" lines.
func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return strings.TrimSpace(s)
}

const maxDetail = 4 << 10

// truncate bounds a guest's message, which is otherwise kept verbatim.
func truncate(s string) string {
	if len(s) <= maxDetail {
		return s
	}
	return strings.ToValidUTF8(s[:maxDetail], "") + "…"
}
