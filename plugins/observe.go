package plugins

import (
	"errors"
	"time"

	"github.com/mcphost/mcphost/sandbox"
)

// Observer is told about every tool call, for metrics. It is called on the
// calling goroutine once the call has returned, so it must be cheap and
// safe for concurrent use; it must not keep the strings beyond the call
// unless it copies them (they are the generation's own).
type Observer interface {
	// ToolCall reports one call of plugin's tool (its exposed name): how
	// long it took and, when it failed, its fault (see [Fault]; "" for a
	// result, including a result with isError set by the plugin).
	ToolCall(plugin, tool string, dur time.Duration, fault string)
}

// Fault names the kind of a call's failure as a metric label would:
// "trap", "timeout", "canceled", "out_of_memory", "guest_error",
// "bad_output", "missing_export", "exit", "host_panic", "bad_input",
// "closed" for the sandbox's typed faults; "invalid_arguments" and
// "invalid_output" for arguments or structuredContent the tool's schemas
// refused; "not_found" for a tool the plugin does not expose; "other" for
// anything else, and ""
// for nil. The strings are constants: naming a fault allocates nothing.
func Fault(err error) string {
	if err == nil {
		return ""
	}
	var ce *sandbox.CallError
	if errors.As(err, &ce) {
		if s, ok := faultNames[ce.Kind]; ok {
			return s
		}
		return "other"
	}
	var ve *ValidationError
	if errors.As(err, &ve) {
		if ve.What == "arguments" {
			return "invalid_arguments"
		}
		return "invalid_output"
	}
	var oe *OutputError
	if errors.As(err, &oe) {
		return "bad_output"
	}
	if errors.Is(err, ErrNotSupported) {
		return "missing_export"
	}
	if errors.Is(err, ErrNotFound) {
		return "not_found"
	}
	return "other"
}

var faultNames = map[sandbox.Kind]string{
	sandbox.KindTrap: "trap", sandbox.KindTimeout: "timeout", sandbox.KindCanceled: "canceled",
	sandbox.KindOutOfMemory: "out_of_memory", sandbox.KindGuestError: "guest_error",
	sandbox.KindBadOutput: "bad_output", sandbox.KindMissingExport: "missing_export",
	sandbox.KindExit: "exit", sandbox.KindHostPanic: "host_panic", sandbox.KindBadInput: "bad_input",
	sandbox.KindClosed: "closed",
}

// PoolStats returns the counts of the instance pool serving p's calls, and
// false for a plugin whose module has none (a Native module).
func (p *Plugin) PoolStats() (sandbox.Stats, bool) {
	if st, ok := p.core.module.(statser); ok {
		return st.Stats(), true
	}
	return sandbox.Stats{}, false
}
