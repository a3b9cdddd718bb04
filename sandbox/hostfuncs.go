package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	extism "github.com/extism/go-sdk"

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

// hostFunctions returns the host functions given to every instance of one
// module; log already carries the plugin attribute.
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
		f := extism.NewHostFunctionWithStack(h.Name, h.callback(log, lim), params, results)
		f.SetNamespace(abi.HostNamespace)
		fns = append(fns, f)
	}
	return fns
}

// callback serves one host function. ctx is the ctx of the Call being
// served (with its deadline), so the Peer is the one given to that Call.
// A request never traps and never outlives the call: without a Peer, or when
// the Peer fails, the guest gets {"error":"…"}.
func (h hostFunc) callback(log *slog.Logger, lim Limits) extism.HostFunctionStackCallback {
	local := localHostFuncs[h.Name]
	return func(ctx context.Context, p *extism.CurrentPlugin, stack []uint64) {
		var payload json.RawMessage
		var perr error
		if h.Payload {
			payload, perr = readJSON(p, stack[0])
		}
		if local != nil { // served here, without the client (localfuncs.go)
			stack[0] = writeBlock(p, local(ctx, lim, payload, perr))
			return
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
			return
		}
		var reply []byte
		switch {
		case perr != nil:
			reply = hostError(perr)
		case peer == nil:
			reply = hostError(ErrNoPeer)
		default:
			res, err := peer.Request(ctx, h.Method, payload)
			switch {
			case err != nil:
				log.Debug("host request failed", "func", h.Name, "err", err)
				reply = hostError(err)
			case len(res) == 0:
				reply = []byte("null")
			default:
				reply = res
			}
		}
		stack[0] = writeBlock(p, reply)
	}
}

var errBadPayload = errors.New("host function payload is not valid JSON")

// readJSON reads the kernel block at offset; 0 or an empty block is no
// payload.
func readJSON(p *extism.CurrentPlugin, offset uint64) (json.RawMessage, error) {
	if offset == 0 {
		return nil, nil
	}
	b, err := p.ReadBytes(offset)
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, nil
	}
	if !json.Valid(b) {
		return nil, errBadPayload
	}
	return b, nil
}

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
