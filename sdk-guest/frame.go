package guest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/abi/jsonscan"
)

// A tool call through abi.ExportCallToolMembers (ABI version 3) does
// what the host has not already done, and nothing else: the host parsed
// the request, so the frame hands over the tool's name, the context's
// members and the raw arguments, each found by its length, and the
// arguments' top-level members, indexed. A tool whose arguments have a
// flat plan (flatargs.go) decodes straight from that index; any other
// scans its arguments once. The Context, its member buffers and the
// strings the host sends on every call (protocol version, plugin) are
// kept from call to call, and the output is written into the caller's
// buffer, so that in steady state the SDK allocates nothing of its own
// for a call. The output is a result frame when the result fits one
// (text blocks, structured content, isError: abi.AppendResultFrame), so
// the host, not the guest, writes its JSON.

// frameCache is what consecutive frame calls reuse. A call that finds it
// taken (natively, concurrent calls; under Wasm never) makes its own.
type frameCache struct {
	mu         sync.Mutex
	ctx        Context
	owned      ownedResult // ctx's own result (Context.TextResult)
	pv, plugin string      // the last ones sent
}

// CallFrame runs the tool call of a frame ([abi.AppendMembersFrame]), the
// input of abi.ExportCallToolMembers, natively: exactly what that export
// runs, as [Dispatch] is for the others. Its output is the export's: a
// result frame ([abi.AppendResultFrame]) when the result fits one, else
// JSON; either way the JSON ([abi.AppendResultJSON] writes a frame's) and
// the errors are those Dispatch(abi.ExportCallTool, …) gives for the same
// call.
func CallFrame(frame []byte) ([]byte, error) {
	return std.callFrame(frame, nil)
}

// callFrame runs the call of frame and appends its CallToolResult to
// out[:0], growing it as needed (appendFrameOutput). The Context handed
// to the handler, its own result, and the raw arguments a typed tool
// decodes, are valid during the call only.
func (r *registry) callFrame(frame, out []byte) (output []byte, err error) {
	defer recoverExport(abi.ExportCallTool, &output, &err)
	var f abi.CallFrame
	if !abi.ParseMembersFrame(frame, &f) {
		return nil, errors.New(abi.ExportCallTool + ": malformed call frame")
	}
	var ctx *Context
	if c := &r.frames; c.mu.TryLock() {
		defer c.mu.Unlock()
		ctx = &c.ctx
		*ctx = Context{members: ctx.members[:0], bigs: ctx.bigs[:0], owned: &c.owned}
		c.owned.taken = false
		ctx.ProtocolVersion = sameString(&c.pv, f.ProtocolVersion)
		ctx.Plugin = sameString(&c.plugin, f.Plugin)
	} else {
		ctx = &Context{}
		ctx.ProtocolVersion, ctx.Plugin = string(f.ProtocolVersion), string(f.Plugin)
	}
	if len(f.ID) > 0 {
		ctx.ID = f.ID
	}
	if len(f.Meta) > 0 {
		ctx.Meta = f.Meta
	}
	t := r.toolOf(f.Name)
	if t == nil && r.catchUpShared() {
		t = r.toolOf(f.Name) // another instance may have added it (shared.go)
	}
	if t == nil {
		return nil, fmt.Errorf("%s: unknown tool %q", abi.ExportCallTool, f.Name)
	}
	var args json.RawMessage
	if len(f.Arguments) > 0 {
		args = f.Arguments
		switch {
		case t.flat && ctx.indexedArgs(args, f.Members): // decodeMembers reads the host's index
		case t.decodes:
			ctx.scanArgs(args)
		default:
			args = bytes.Clone(args) // a raw handler may keep them
		}
	}
	res, err := runTool(ctx, t, args)
	if err != nil {
		res = Error(err.Error())
	}
	if ctx.rawSet {
		return ctx.rawOutput, nil
	}
	out, err = appendFrameOutput(out, finish(res))
	if o := ctx.owned; o != nil && o.taken {
		*o = ownedResult{} // what it held goes with the call
	}
	return out, err
}

// appendFrameOutput appends res to out[:0] as the frame export's output:
// a result frame when it fits one (the host writes the JSON, natively),
// else JSON.
func appendFrameOutput(out []byte, res *Result) ([]byte, error) {
	if n := abi.ResultFrameSize(res); cap(out) < n {
		out = make([]byte, 0, n)
	}
	if frame, ok := abi.AppendResultFrame(out[:0], res); ok {
		return frame, nil
	}
	if n := resultSize(res); cap(out) < n {
		out = make([]byte, 0, n)
	}
	out, err := appendCallToolResult(out[:0], res)
	if err != nil {
		return nil, fmt.Errorf("%s: encode output: %w", abi.ExportCallTool, err)
	}
	return out, nil
}

// sameString returns b as a string: *last when it holds the same bytes,
// else a new string, kept in *last for the next call.
func sameString(last *string, b []byte) string {
	if string(b) != *last {
		*last = string(b)
	}
	return *last
}

// toolOf returns the tool named name, without making a string of it.
func (r *registry) toolOf(name []byte) *toolEntry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, t := range r.tools {
		if t.def.Name == string(name) {
			return t
		}
	}
	return nil
}

// indexedArgs records, for decodeArgs, the top-level members of args as
// index (abi.CallFrame.Members) holds them, and reports whether it did:
// the host sent an index that fits args.
func (c *Context) indexedArgs(args, index []byte) bool {
	ms := c.members[:0]
	if cap(ms) == 0 {
		ms = c.memberBuf[:0]
	}
	ms, ok := abi.ArgMembers(ms, index, len(args))
	if !ok || len(args) > math.MaxInt32 {
		return false
	}
	c.members, c.membersSet, c.bigsOf = ms, true, args
	return true
}

// scanArgs records, for decodeArgs, the top-level members and the big
// strings of args, a call's arguments, in one validating pass. Arguments
// that are not an object, or not valid, record nothing: encoding/json
// then decodes them and reports their errors.
func (c *Context) scanArgs(args []byte) {
	if args[0] != '{' || len(args) > math.MaxInt32 {
		return
	}
	ms := c.members[:0]
	if cap(ms) == 0 {
		ms = c.memberBuf[:0]
	}
	bigs := c.bigs[:0]
	sc := jsonscan.Scanner{OnString: func(s jsonscan.String) {
		if s.End-s.Start >= bigString {
			bigs = append(bigs, s)
		}
	}}
	end, err := scanArgMembers(sc, args, 0, 1, &ms)
	if err != nil || jsonscan.SkipSpace(args, end) != len(args) {
		return
	}
	c.members, c.membersSet = ms, true
	c.bigs, c.bigsOf, c.bigsSet = bigs, args, true
}
