package limits

import (
	"runtime"
	"time"
)

// Defaults and bounds of sandbox.Limits.
const (
	DefaultMemoryPages    = 4096 // 256 MiB per memory
	MaxMemoryPages        = 65536
	DefaultTimeout        = 5 * time.Second
	DefaultCancelGrace    = time.Second
	DefaultMaxInputBytes  = 4 << 20
	DefaultMaxOutputBytes = 16 << 20
)

// DefaultInstances is the size of a warm pool when Limits leaves it
// zero: one instance a CPU.
func DefaultInstances() int { return runtime.NumCPU() }

// RuntimeNative names what every module runs on: mcphost's own
// implementation of the Extism kernel (extism:host/env) on wazero. It is
// the only runtime; callers report it (mcphost validate).
const RuntimeNative = "native"

// Mount is one allowed path.
type Mount struct {
	Host     string // directory on the host
	Guest    string // path the guest sees; "" means the same as Host
	ReadOnly bool
	// From says where the mount was granted ("policy.yaml:7") when that is
	// not the plugin's allowed_paths; errors about the mount name it.
	From string
}
