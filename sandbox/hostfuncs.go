package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	extism "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/abi"
)

// hostFunc is one import of abi.HostNamespace (see abi.HostFuncs).
//
// Signatures are exactly hyper-mcp's (src/service.rs host_fns), because
// wazero refuses to instantiate a guest whose import signature differs, and
// hyper-mcp plugins must run unmodified: a function takes an i64 offset of a
// kernel memory block holding JSON only when it has a payload, and returns
// an i64 offset of a JSON reply only when it is a request.
type hostFunc abi.HostFunc

// userModule is the import module of the host functions.
const userModule = abi.HostNamespace

// hostFunctions returns the host functions given to every go-sdk instance
// of one module; log already carries the plugin attribute.
func hostFunctions(log *slog.Logger, lim Limits) []extism.HostFunction {
	fns := make([]extism.HostFunction, 0, len(abi.HostFuncs))
	for _, af := range abi.HostFuncs {
		h := hostFunc(af)
		var params, results []extism.ValueType
		if h.Payload {
			params = []extism.ValueType{extism.ValueTypePTR}
		}
		if h.Reply {
			results = []extism.ValueType{extism.ValueTypePTR}
		}
		f := extism.NewHostFunctionWithStack(h.Name, func(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
			var payload []byte
			var perr error
			if h.Payload && stack[0] != 0 {
				payload, perr = p.ReadBytes(stack[0])
			}
			if reply := h.serve(ctx, log, lim, payload, perr); h.Reply {
				stack[0] = writeBlock(p, reply)
			}
		}, params, results)
		f.SetNamespace(userModule)
		fns = append(fns, f)
	}
	return fns
}

// userHostModule defines the same host functions for the native kernel.
func userHostModule(hb wazero.HostModuleBuilder, log *slog.Logger, lim Limits) wazero.HostModuleBuilder {
	for _, af := range abi.HostFuncs {
		h := hostFunc(af)
		var params, results []api.ValueType
		if h.Payload {
			params = []api.ValueType{i64}
		}
		if h.Reply {
			results = []api.ValueType{i64}
		}
		hb.NewFunctionBuilder().WithGoFunction(api.GoFunc(func(ctx context.Context, stack []uint64) {
			g := guestOf(ctx)
			var payload []byte
			if h.Payload {
				// A copy: the Peer may keep it past the call, and the
				// kernel's memory is reused.
				payload = bytes.Clone(g.k.read(stack[0]))
			}
			if reply := h.serve(ctx, log, lim, payload, nil); h.Reply {
				stack[0] = g.k.write(reply)
			}
		}), params, results).Export(h.Name)
	}
	return hb
}

// serve runs one host function whatever the runtime, for a module with
// limits lim: payload is the JSON
// the guest passed (nil: none), perr a failure to read it. It returns the
// reply of a request (nil for a notification). ctx is the ctx of the Call
// being served (with its deadline), so the Peer is the one given to that
// Call. A request never traps and never outlives the call: without a Peer,
// or when the Peer fails, the guest gets {"error":"…"}.
func (h hostFunc) serve(ctx context.Context, log *slog.Logger, lim Limits, payload []byte, perr error) []byte {
	if perr == nil && len(payload) > 0 && !json.Valid(payload) {
		perr = errBadPayload
	}
	if len(payload) == 0 {
		payload = nil
	}
	if local := localHostFuncs[h.Name]; local != nil { // served here, without the client (localfuncs.go)
		return local(ctx, lim, payload, perr)
	}
	peer := PeerFrom(ctx)
	if !h.Reply {
		switch {
		case perr != nil:
			log.Warn("host function payload", "func", h.Name, "err", perr)
		case peer == nil:
			log.Debug("host notification dropped", "func", h.Name, "err", ErrNoPeer)
		default:
			if err := peer.Notify(ctx, h.Method, payload); err != nil {
				log.Debug("host notification failed", "func", h.Name, "err", err)
			}
		}
		return nil
	}
	switch {
	case perr != nil:
		return hostError(perr)
	case peer == nil:
		return hostError(ErrNoPeer)
	}
	res, err := peer.Request(ctx, h.Method, payload)
	switch {
	case err != nil:
		log.Debug("host request failed", "func", h.Name, "err", err)
		return hostError(err)
	case len(res) == 0:
		return []byte("null")
	}
	return res
}

var errBadPayload = errors.New("host function payload is not valid JSON")

// writeBlock copies b into a new kernel block and returns its offset, or 0
// when the kernel is out of memory (its alloc returns 0, which go-sdk's
// WriteBytes would then write over).
func writeBlock(p *extism.CurrentPlugin, b []byte) uint64 {
	off, err := p.Alloc(uint64(len(b)))
	if err != nil || off == 0 {
		return 0
	}
	if !p.Memory().Write(uint32(off), b) {
		return 0
	}
	return off
}

func hostError(err error) []byte {
	b, _ := json.Marshal(abi.HostError{Error: err.Error()})
	return b
}
