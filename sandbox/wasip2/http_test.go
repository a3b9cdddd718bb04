package wasip2

import (
	"context"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/mcphost/mcphost/sandbox/component"
)

// testInstance is an instance of an empty component whose host may hold
// hostBytes for it, with state as its State.
func testInstance(t *testing.T, hostBytes int64, state any) *component.Instance {
	t.Helper()
	ctx := context.Background()
	c, err := component.Decode([]byte("\x00asm\x0d\x00\x01\x00"))
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	t.Cleanup(func() { rt.Close(ctx) })
	cp, err := component.Compile(ctx, rt, c, Host(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cp.Limits.HostBytes = hostBytes
	inst, err := cp.Instantiate(ctx, state)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close(ctx) })
	return inst
}

// catch runs f and returns what it panicked with.
func catch(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}

// TestFieldsHostMemory charges wasi:http's fields to their instance: past
// the limit an add fails (panics with a plain *HostMemoryError, which
// fails the guest's call) and holds nothing; dropping what was held gives
// it back.
func TestFieldsHostMemory(t *testing.T) {
	inst := testInstance(t, 1<<20, &State{})
	hc := &component.HostCall{Ctx: context.Background(), Inst: inst}
	f := newFields(hc)
	value := strings.Repeat("v", 100<<10)
	for range 10 {
		f.add("x-hoard", value)
	}
	r := catch(func() { f.add("x-hoard", value) })
	e, isMem := r.(*component.HostMemoryError)
	if !isMem || e.Limit != 1<<20 || !strings.Contains(e.Error(), "memory limit of 1048576 bytes") {
		t.Fatalf("the 11th value of 100 KiB under a limit of 1 MiB: %v", r)
	}
	if len(f.list) != 10 || inst.HostBytes() != 10*entryBytes([2]string{"x-hoard", value}) {
		t.Errorf("after the refusal: %d fields holding %d bytes", len(f.list), inst.HostBytes())
	}
	if r := catch(func() { f.clone(hc) }); r == nil {
		t.Error("a clone of 1 MiB of fields fit beside them under a limit of 1 MiB")
	}
	f.Drop()
	if inst.HostBytes() != 0 {
		t.Errorf("dropped fields still hold %d bytes", inst.HostBytes())
	}
	g := f.clone(hc)
	g.add("x-again", value)
	if inst.HostBytes() == 0 {
		t.Error("fields built after a drop are not charged")
	}
	g.Drop()
	if inst.HostBytes() != 0 {
		t.Errorf("a dropped clone still holds %d bytes", inst.HostBytes())
	}
}
