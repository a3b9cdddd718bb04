package plugins

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sandbox"
)

// lazyGuestOf is the Guest of a lazy module (lazy.go). For a core module
// it is the Extism guest over lm itself, which tells the exports from the
// export section and loads the module on the first call. A component's
// tools are known only once it is compiled, so its guest is a lazyGuest,
// which loads the module on the first question and asks the component's
// own Guest. version is the ABI the list cache recorded.
func lazyGuestOf(lm *lazyModule, runtime string, version int) sandbox.Guest {
	if runtime != "component" {
		if g, err := sandbox.NewGuest(lm, lm.name); err == nil {
			return g
		}
	}
	return &lazyGuest{lm: lm, abi: version}
}

// lazyGuest is the Guest of the module lm loads on first use.
type lazyGuest struct {
	lm  *lazyModule
	abi int // as the list cache recorded it

	mu sync.Mutex
	g  sandbox.Guest // once loaded
}

// guest loads the module, once, and returns its Guest.
func (lg *lazyGuest) guest(ctx context.Context) (sandbox.Guest, error) {
	m, err := lg.lm.ensure(ctx)
	if err != nil {
		return nil, err
	}
	lg.mu.Lock()
	defer lg.mu.Unlock()
	if lg.g == nil {
		if lg.g, err = sandbox.NewGuest(m, lg.lm.name); err != nil {
			return nil, err
		}
	}
	return lg.g, nil
}

// ABI is what the list cache recorded, without loading.
func (lg *lazyGuest) ABI() int { return lg.abi }

func (lg *lazyGuest) Lists(ctx context.Context) (*sandbox.Lists, error) {
	g, err := lg.guest(ctx)
	if err != nil {
		return nil, err
	}
	return g.Lists(ctx)
}

func (lg *lazyGuest) CallTool(ctx context.Context, tool sandbox.ToolRef, args json.RawMessage, cc abi.Context) (sandbox.ToolResult, error) {
	g, err := lg.guest(ctx)
	if err != nil {
		return sandbox.ToolResult{}, err
	}
	return g.CallTool(ctx, tool, args, cc)
}

func (lg *lazyGuest) ReadResource(ctx context.Context, uri string, cc abi.Context) (json.RawMessage, error) {
	g, err := lg.guest(ctx)
	if err != nil {
		return nil, err
	}
	return g.ReadResource(ctx, uri, cc)
}

func (lg *lazyGuest) GetPrompt(ctx context.Context, name string, args map[string]string, cc abi.Context) (json.RawMessage, error) {
	g, err := lg.guest(ctx)
	if err != nil {
		return nil, err
	}
	return g.GetPrompt(ctx, name, args, cc)
}

func (lg *lazyGuest) Complete(ctx context.Context, params abi.CompleteParams, cc abi.Context) (json.RawMessage, error) {
	g, err := lg.guest(ctx)
	if err != nil {
		return nil, err
	}
	return g.Complete(ctx, params, cc)
}

func (lg *lazyGuest) RootsListChanged(ctx context.Context, cc abi.Context) error {
	g, err := lg.guest(ctx)
	if err != nil {
		return err
	}
	return g.RootsListChanged(ctx, cc)
}
