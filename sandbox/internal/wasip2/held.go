package wasip2

import "github.com/mcphost/mcphost/sandbox/internal/component"

// The host objects behind the guest's handles: each releases what it holds
// when its handle goes, and those of a fixed size are charged with it.
var (
	_ component.Dropper = (*inputStream)(nil)
	_ component.Dropper = (*outputStream)(nil)
	_ component.Dropper = (*descriptor)(nil)
	_ component.Dropper = (*fields)(nil)
	_ component.Dropper = (*outgoingRequest)(nil)
	_ component.Dropper = (*outgoingBody)(nil)
	_ component.Dropper = (*futureResponse)(nil)
	_ component.Dropper = (*incomingResponse)(nil)
	_ component.Dropper = (*incomingBody)(nil)
	_ component.Sized   = (*ioError)(nil)
	_ component.Sized   = (*dirStream)(nil)
)

// held is what one host object charged to its instance
// ([component.Instance.Charge]); free gives it back once.
type held struct {
	inst *component.Instance // nil: nothing is charged
	n    int64
}

// holdFor is an empty holder charging hc's instance.
func holdFor(hc *component.HostCall) held { return held{inst: hc.Inst} }

// grow charges n more bytes to h.
func (h *held) grow(what string, n int64) {
	if h.inst != nil {
		h.inst.Charge(what, n)
	}
	h.n += n
}

// shrink gives back n of the bytes h holds.
func (h *held) shrink(n int64) {
	n = min(n, h.n)
	if h.inst != nil {
		h.inst.Release(n)
	}
	h.n -= n
}

// move hands n of the bytes h holds over to a new holder.
func (h *held) move(n int64) held {
	n = min(n, h.n)
	h.n -= n
	return held{inst: h.inst, n: n}
}

// Close frees h (an input stream's closer holds what it reads).
func (h *held) Close() error {
	h.free()
	return nil
}

// free releases everything h holds.
func (h *held) free() {
	if h.inst != nil {
		h.inst.Release(h.n)
	}
	h.n = 0
}
