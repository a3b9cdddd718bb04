package plugins

import "testing"

// TestFaultText covers the sandbox's detail strings as the faults in
// examples/faulty produce them (and a Rust panic and a host panic).
func TestFaultText(t *testing.T) {
	tests := []struct{ name, detail, want string }{
		{"go panic", "wasm error: unreachable; stderr: panic: runtime error: invalid memory address or nil pointer dereference [recovered]",
			"panic: runtime error: invalid memory address or nil pointer dereference"},
		{"stack overflow", "wasm error: unreachable; stderr: runtime: goroutine stack exceeds 1048576-byte limit | runtime: sp=0x4e0328 stack=[0x4e0000, 0x5e0000] | fatal error: stack overflow | runtime: g 0: unexpected return pc for runtime.morestack called from 0x1e74c8",
			"stack overflow"},
		{"out of memory", "wasm error: unreachable; stderr: runtime: out of memory: cannot allocate 1048576-byte block (29229056 in use) | fatal error: out of memory",
			"out of memory"},
		{"rust panic", "wasm error: unreachable; stderr: thread '<unnamed>' panicked at src/lib.rs:9:5: | boom", "thread '<unnamed>' panicked at src/lib.rs:9:5:; boom"},
		{"host panic", "index out of range [3] with length 1 (recovered by wazero)", "index out of range [3] with length 1"},
		{"bare trap", "wasm error: integer divide by zero", "integer divide by zero"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := faultText(tt.detail); got != tt.want {
				t.Errorf("faultText(%q)\n got %q\nwant %q", tt.detail, got, tt.want)
			}
		})
	}
}
