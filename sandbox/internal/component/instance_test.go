package component

import "testing"

// dropCount is a host object that counts its drops.
type dropCount struct{ n *int }

func (d dropCount) Drop() { *d.n++ }

// TestHandlesDrop: a handle's [Dropper] is dropped when the instance
// closes with the handle live, not when the host has taken it out of the
// table (an own handle lifted), and the table is empty afterwards.
func TestHandlesDrop(t *testing.T) {
	inst := &Instance{mem: hostMem{limit: 1 << 20}}
	inst.handles.mem = &inst.mem
	res := &Resource{Name: "stream"}
	var live, taken int
	inst.handles.add(res, dropCount{&live}, true)
	h := inst.handles.add(res, dropCount{&taken}, true)
	if got := inst.handles.remove(res, h); got != (dropCount{&taken}) {
		t.Fatalf("remove gave %v", got)
	}
	inst.handles.closeAll()
	if live != 1 || taken != 0 {
		t.Errorf("after close: the live handle's object dropped %d times, the removed one's %d; want 1 and 0", live, taken)
	}
	if inst.HostBytes() != 0 || len(inst.handles.slots) != 0 {
		t.Errorf("after close: %d bytes held, %d slots", inst.HostBytes(), len(inst.handles.slots))
	}
	if r := catch(func() { inst.handles.get(res, h) }); r == nil {
		t.Error("a handle of a closed table is still live")
	}
}
