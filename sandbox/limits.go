package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcphost/mcphost/sandbox/limits"
)

// Defaults and bounds of [Limits] (package limits holds them, so that
// plugins/config checks a file against the same values without wazero).
const (
	DefaultMemoryPages    = limits.DefaultMemoryPages // 256 MiB per memory
	MaxMemoryPages        = limits.MaxMemoryPages
	DefaultTimeout        = limits.DefaultTimeout
	DefaultCancelGrace    = limits.DefaultCancelGrace
	DefaultMaxInputBytes  = limits.DefaultMaxInputBytes
	DefaultMaxOutputBytes = limits.DefaultMaxOutputBytes

	// kernelMinPages is the minimum memory of the Extism kernel module
	// (extism-runtime.wasm v1.7.0); the cap applies to it as well.
	kernelMinPages = 16
	pageSize       = 64 << 10
	// defaultMaxHTTPBytes is go-sdk's own default for http_request bodies.
	defaultMaxHTTPBytes = 50 << 20
)

// DefaultInstances is the size of a warm pool when Limits leaves it
// zero: one instance a CPU.
func DefaultInstances() int { return limits.DefaultInstances() }

// normalize returns lim with defaults filled in, or the first problem found.
// It runs before anything reaches wazero, whose memory limit panics above
// 65536 pages.
func normalize(lim Limits) (Limits, error) {
	switch {
	case lim.MemoryPages == 0:
		lim.MemoryPages = DefaultMemoryPages
	case lim.MemoryPages > MaxMemoryPages:
		return lim, fmt.Errorf("memory pages %d over the maximum of %d (4 GiB)", lim.MemoryPages, MaxMemoryPages)
	case lim.MemoryPages < kernelMinPages:
		return lim, fmt.Errorf("memory pages %d below the Extism kernel's minimum of %d", lim.MemoryPages, kernelMinPages)
	}
	memBytes := int(lim.MemoryPages) * pageSize

	switch {
	case lim.Timeout < 0:
		return lim, fmt.Errorf("timeout %v is negative", lim.Timeout)
	case lim.Timeout == 0:
		lim.Timeout = DefaultTimeout
	}
	switch {
	case lim.CancelGrace < 0:
		return lim, fmt.Errorf("cancel grace %v is negative", lim.CancelGrace)
	case lim.CancelGrace == 0:
		lim.CancelGrace = DefaultCancelGrace
	}
	switch {
	case lim.Instances < 0:
		return lim, fmt.Errorf("instances %d is negative", lim.Instances)
	case lim.Instances == 0:
		lim.Instances = DefaultInstances()
	}

	// The input is copied into the kernel's memory before the guest runs.
	// When it does not fit, go-sdk 1.7.1 silently passes an empty input, so
	// the input limit must keep well inside the memory limit.
	switch {
	case lim.MaxInputBytes < 0:
		return lim, fmt.Errorf("max input bytes %d is negative", lim.MaxInputBytes)
	case lim.MaxInputBytes == 0:
		lim.MaxInputBytes = min(DefaultMaxInputBytes, memBytes/4)
	case lim.MaxInputBytes > memBytes/2:
		return lim, fmt.Errorf("max input bytes %d over half the memory limit (%d bytes); raise memory pages", lim.MaxInputBytes, memBytes)
	}
	switch {
	case lim.MaxOutputBytes < 0:
		return lim, fmt.Errorf("max output bytes %d is negative", lim.MaxOutputBytes)
	case lim.MaxOutputBytes == 0:
		lim.MaxOutputBytes = DefaultMaxOutputBytes
	}

	if _, err := parseHostRules(lim.AllowedHosts); err != nil {
		return lim, err
	}
	lim.AllowedHosts = append([]string(nil), lim.AllowedHosts...)
	if _, err := parseHostRules(lim.MayRequestHosts); err != nil {
		return lim, fmt.Errorf("may request: %w", err)
	}
	lim.MayRequestHosts = append([]string(nil), lim.MayRequestHosts...)

	seen := make(map[string]bool)
	var err error
	if lim.AllowedPaths, err = normMounts(lim.AllowedPaths, seen, "allowed paths"); err != nil {
		return lim, err
	}
	if lim.MayRequestPaths, err = normMounts(lim.MayRequestPaths, seen, "may request paths"); err != nil {
		return lim, err
	}

	for k, v := range lim.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return lim, fmt.Errorf("env: invalid variable %q", k)
		}
	}
	lim.Env = cloneMap(lim.Env)
	lim.Config = cloneMap(lim.Config)
	lim.Secrets = cloneMap(lim.Secrets)
	return lim, nil
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// normMounts makes each mount's host path absolute and its guest path set,
// and refuses a directory that is missing, not a directory, or already in
// seen (the module's other mounts); key names the list in errors.
func normMounts(in []Mount, seen map[string]bool, key string) ([]Mount, error) {
	mounts := make([]Mount, 0, len(in))
	for _, m := range in {
		if m.Host == "" {
			return nil, fmt.Errorf("%s: empty host path", key)
		}
		host, err := filepath.Abs(m.Host)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %w", key, m.Host, err)
		}
		where := key
		if m.From != "" {
			where += " (" + m.From + ")"
		}
		fi, err := os.Stat(host)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", where, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("%s: %q is not a directory", where, host)
		}
		if seen[host] {
			return nil, fmt.Errorf("%s: %q is mounted twice", where, host)
		}
		seen[host] = true
		if m.Guest == "" {
			m.Guest = m.Host
		}
		m.Host = host
		mounts = append(mounts, m)
	}
	return mounts, nil
}
