package extism

import (
	"context"
	"errors"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/mcphost/mcphost/abi"
)

// oneMemoryPage is a module exporting one page of memory and nothing else.
var oneMemoryPage = []byte{
	0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
	0x05, 0x03, 0x01, 0x00, 0x01, // memory: min 1 page
	0x07, 0x07, 0x01, 0x03, 'm', 'e', 'm', 0x02, 0x00, // export "mem"
}

func ioFunc(t *testing.T, name string) func(*Kernel, api.Memory, []uint64) {
	for _, f := range IOFuncs {
		if f.Name == name {
			return f.Fn
		}
	}
	t.Fatalf("IOFuncs has no %s", name)
	return nil
}

// TestBulkInputOutput: input copies what fits and tells the whole length;
// output sets a block holding the guest's bytes as the output, or says
// the kernel is full; a range outside the guest's memory fails the call.
func TestBulkInputOutput(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	mod, err := rt.Instantiate(ctx, oneMemoryPage)
	if err != nil {
		t.Fatal(err)
	}
	mem := mod.Memory()
	input, output := ioFunc(t, abi.IOInput), ioFunc(t, abi.IOOutput)
	bounds := func(f func()) (err error) {
		defer func() { err, _ = recover().(error) }()
		f()
		return nil
	}

	for _, tt := range []struct {
		name   string
		room   uint32
		copied string
	}{{"fits", 16, "hello"}, {"too small", 2, "he"}, {"no room", 0, ""}} {
		t.Run("input "+tt.name, func(t *testing.T) {
			k := NewKernel(1 << 10)
			k.SetInput([]byte("hello"))
			mem.Write(100, []byte("................"))
			s := []uint64{100, uint64(tt.room)}
			input(&k, mem, s)
			got, _ := mem.Read(100, 6)
			if int64(s[0]) != 5 || string(got[:len(tt.copied)]) != tt.copied || got[len(tt.copied)] != '.' {
				t.Errorf("returned %d, memory %q; want 5 and %q then the old bytes", int64(s[0]), got, tt.copied)
			}
		})
	}
	t.Run("input outside memory", func(t *testing.T) {
		k := NewKernel(1 << 10)
		k.SetInput([]byte("hello"))
		if err := bounds(func() { input(&k, mem, []uint64{65534, 16}) }); !errors.Is(err, errGuestBounds) {
			t.Errorf("got %v; want %v", err, errGuestBounds)
		}
	})

	t.Run("output", func(t *testing.T) {
		k := NewKernel(1 << 10)
		mem.Write(200, []byte("result"))
		s := []uint64{200, 6}
		output(&k, mem, s)
		if s[0] != 0 || string(k.Output()) != "result" {
			t.Errorf("returned %d, output %q; want 0 and \"result\"", s[0], k.Output())
		}
		mem.Write(200, []byte("XXXXXX"))
		if string(k.Output()) != "result" {
			t.Errorf("output %q after the guest's memory changed; want its own copy", k.Output())
		}
	})
	t.Run("output too big for the kernel", func(t *testing.T) {
		k := NewKernel(4)
		s := []uint64{200, 6}
		output(&k, mem, s)
		if api.DecodeI32(s[0]) != 1 || k.Output() != nil {
			t.Errorf("returned %d, output %q; want 1 and none", api.DecodeI32(s[0]), k.Output())
		}
	})
	t.Run("empty output", func(t *testing.T) {
		k := NewKernel(1 << 10)
		s := []uint64{200, 0}
		output(&k, mem, s)
		if s[0] != 0 || k.Output() != nil {
			t.Errorf("returned %d, output %q; want 0 and none", s[0], k.Output())
		}
	})
	t.Run("output outside memory", func(t *testing.T) {
		k := NewKernel(1 << 10)
		if err := bounds(func() { output(&k, mem, []uint64{65534, 16}) }); !errors.Is(err, errGuestBounds) {
			t.Errorf("got %v; want %v", err, errGuestBounds)
		}
	})
}
