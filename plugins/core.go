package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/source"
	"github.com/mcphost/mcphost/sandbox"
)

// Module is what a [Plugin] runs on: a *sandbox.Module in production, or a
// native Go implementation of the same byte-level ABI (tests, benchmarks,
// built-ins), which a config.Spec carries as Native. It is config.Module,
// the one definition, named here for plugins' callers.
type Module = config.Module

// core is a loaded module and what it listed when it loaded. Every
// generation that holds a plugin holds one reference on its core; the
// module is closed when the last reference goes. A core is immutable after
// loading, so generations share it freely.
type core struct {
	name         string
	module       Module
	guest        sandbox.Guest // what the plugin's calls ask: module's, or a lazy module's (lazyGuest)
	native       Module        // the spec's Native module, for reuse checks (nil for Wasm)
	hash         string        // code SHA-256 and limits; equal hashes may share the core
	runtime      string        // what the module runs on (Plugin.Runtime)
	abi          int
	guestVersion int
	strict       bool           // strict_schemas: refuse tools with invalid schemas
	warnings     []string       // faults found while reading the lists, for validate
	unprovided   []string       // imports the host does not provide (components), for validate
	model        Model          // how many instances serve calls, and why
	sum          string         // the code's SHA-256, hex ("" for a Native module)
	signer       *source.Signer // who signed the code, when the spec has a signature table
	log          *slog.Logger
	discarded    atomic.Uint64 // the module's Stats().Discarded last seen
	// signal tells the Loader the plugin signalled a list change
	// (dynamic.go); nil for cores that cannot (tests).
	signal func()
	// obs is told about tool calls (nil: nobody listens).
	obs Observer
	// base is the core first loaded with this module when this one was
	// made by re-reading its lists (see [Loader.Relist]); this core holds
	// one reference on it, and only base closes the module.
	base *core
	// flood is the plugin's rate limit on messages to clients, used on
	// the root core (flood.go).
	flood floodGate

	tools     []listedTool
	resources []listedResource
	templates []listedTemplate
	prompts   []listedPrompt
	skills    []abi.SkillFile // what the guest's mcphost_list_skills returned (skills.go)

	refs atomic.Int32
}

type listedTool struct {
	def     abi.Tool
	index   int             // its place in the guest's list (sandbox.ToolRef)
	raw     json.RawMessage // compact
	in, out *jsonschema.Schema
	flat    *flatSchema // in's one-pass form, when it has one
	outFlat *flatSchema // out's one-pass form, when it has one
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

// root is the core that owns the module: c, or the one c's lists were
// re-read from.
func (c *core) root() *core {
	if c.base != nil {
		return c.base
	}
	return c
}

// release drops a reference and closes the module with the last one (for
// a core made by re-reading lists: drops its reference on its base).
func (c *core) release(ctx context.Context) error {
	switch n := c.refs.Add(-1); {
	case n == 0 && c.base != nil:
		return c.base.release(ctx)
	case n == 0:
		if err := c.module.Close(ctx); err != nil {
			return fmt.Errorf("plugin %q: close: %w", c.name, err)
		}
	case n < 0:
		panic("plugins: core released more often than acquired")
	}
	return nil
}
