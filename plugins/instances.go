package plugins

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/sandbox"
)

// Model is how a plugin's calls are served: by one long-lived instance,
// one call at a time, or by a pool of interchangeable instances.
type Model struct {
	// Instances is the most instances serving calls at once; 1 means one
	// long-lived instance whose state (globals, Extism vars, a tool list
	// that grows) lasts from call to call until a fault. 0 for modules
	// that are not Wasm (Spec.Native), which manage themselves.
	Instances int
	// Reason says why, for `mcphost validate`.
	Reason string
	// KeepsState: the plugin is not declared stateless, so its instances
	// may hold state it relies on. When its compiled code becomes ready
	// while it runs on wazero's interpreter, an instance that served
	// calls keeps serving there (sandbox.Limits.KeepsState).
	KeepsState bool
}

// String is "single instance (reason)" or "pool of N instances (reason)".
func (m Model) String() string {
	switch m.Instances {
	case 0:
		return "native module"
	case 1:
		return "single instance (" + m.Reason + ")"
	}
	return fmt.Sprintf("pool of %d instances (%s)", m.Instances, m.Reason)
}

// instanceModel decides the model of a Wasm plugin. A plugin runs the way
// hyper-mcp runs every plugin (one instance, calls serialised, state kept)
// unless it declares itself stateless by exporting abi.ExportStateless;
// then it gets a warm pool of the server's max_instances. The plugin's own
// max_instances overrides either way.
//
// Bytes whose exports do not parse (exports nil) get the single
// instance; loading them then fails with the sandbox's own, better,
// message.
func instanceModel(spec *config.Spec, server *config.ServerConfig, exports []string) Model {
	stateless := slices.Contains(exports, abi.ExportStateless)
	if spec.MaxInstances > 0 {
		return Model{Instances: spec.MaxInstances, KeepsState: !stateless,
			Reason: fmt.Sprintf("max_instances = %d in its [[plugin]] table", spec.MaxInstances)}
	}
	if stateless {
		n := max(server.MaxInstances, 1)
		return Model{Instances: n, Reason: "it exports " + abi.ExportStateless + ": declared stateless"}
	}
	return Model{Instances: 1, KeepsState: true, Reason: "it may keep state between calls, as hyper-mcp plugins do; no " +
		abi.ExportStateless + " export"}
}

// Instances says how the plugin's calls are served, and why.
func (p *Plugin) Instances() Model { return p.core.model }

// statser is implemented by *sandbox.Module.
type statser interface{ Stats() sandbox.Stats }

// ask asks the plugin's guest one question (q, named by its export for
// logs), with the plugin's peer around the call's own (a moduleCall).
// After a failure of a single-instance plugin that threw its instance
// away (a trap, a timeout, running out of memory, a cancelled call that
// outran its cancel grace), it logs that the plugin's state was lost: the
// next call runs on a fresh instance.
func (c *core) ask(ctx context.Context, export string, q func(context.Context) error) error {
	mc := newModuleCall(ctx, c)
	err := q(mc)
	mc.peer.limit.finish(ctx, mc.peer.inner, c.name)
	if err != nil && c.model.Instances == 1 {
		if st, ok := c.module.(statser); ok {
			if d := st.Stats().Discarded; d > c.discarded.Swap(d) {
				msg := "plugin instance re-created after a fault: its state was lost"
				if errors.Is(err, sandbox.ErrCanceled) {
					msg = "plugin instance re-created after a cancelled call outran cancel_grace: its state was lost"
				}
				c.log.Warn(msg, "plugin", c.name, "export", export, "err", err)
			}
		}
	}
	return err
}
