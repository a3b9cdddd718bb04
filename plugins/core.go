package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcphost/mcphost/abi"
)

// core is a loaded module and what it listed when it loaded. Every
// generation that holds a plugin holds one reference on its core; the
// module is closed when the last reference goes. A core is immutable after
// loading, so generations share it freely.
type core struct {
	name         string
	module       Module
	native       Module // the spec's Native module, for reuse checks (nil for Wasm)
	hash         string // code SHA-256 and limits; equal hashes may share the core
	runtime      string // what the module runs on (Plugin.Runtime)
	abi          int
	guestVersion int

	tools     []listedTool
	resources []listedResource
	templates []listedTemplate
	prompts   []listedPrompt

	refs atomic.Int32
}

type listedTool struct {
	def     abi.Tool
	raw     json.RawMessage // compact
	in, out *jsonschema.Schema
}

type listedResource struct {
	def abi.Resource
	raw json.RawMessage
}

type listedTemplate struct {
	def abi.ResourceTemplate
	raw json.RawMessage
	tpl *uriTemplate
}

type listedPrompt struct {
	def abi.Prompt
	raw json.RawMessage
}

// acquire takes a reference unless the core is already released (its
// module closed or closing); it never brings a core back to life.
func (c *core) acquire() bool {
	for {
		n := c.refs.Load()
		if n <= 0 {
			return false
		}
		if c.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release drops a reference and closes the module with the last one.
func (c *core) release(ctx context.Context) error {
	switch n := c.refs.Add(-1); {
	case n == 0:
		if err := c.module.Close(ctx); err != nil {
			return fmt.Errorf("plugin %q: close: %w", c.name, err)
		}
	case n < 0:
		panic("plugins: core released more often than acquired")
	}
	return nil
}
