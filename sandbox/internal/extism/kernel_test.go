package extism

import "testing"

// TestKernel checks the block store's observable semantics, which guests
// see only as offsets and lengths (sandbox/internal/differential compares
// them with go-sdk's kernel).
func TestKernel(t *testing.T) {
	k := &Kernel{limit: 1 << 10}
	k.Reset()
	if !k.SetInput([]byte("0123456789")) {
		t.Fatal("setInput failed")
	}
	a := k.alloc(3)
	b := k.alloc(9)
	tests := []struct {
		name      string
		got, want uint64
	}{
		{"input length", k.inputLen, 10},
		{"length(input)", k.length(k.input), 10},
		{"length(0)", k.length(0), 0},
		{"length inside a block", k.length(a + 1), 0},
		{"length(a)", k.length(a), 3},
		{"blocks are 8-aligned", b % 8, 0},
		{"alloc(0)", k.alloc(0), 0},
		{"alloc over the limit", k.alloc(1 << 10), 0},
		{"input_load_u8 in range", uint64(k.inputLoadU8(9)), '9'},
		{"input_load_u8 past the end", uint64(k.inputLoadU8(10)), 0},
		{"input_load_u64 last whole word", k.inputLoadU64(2), 0x3938373635343332},
		{"input_load_u64 past the end", k.inputLoadU64(3), 0},
		{"load_u8 below the arena", uint64(k.loadU8(1)), 0},
		{"load_u64 past the arena", k.loadU64(b + 8), 0},
		{"fresh block is zeroed", k.loadU64(b), 0},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s: got %#x; want %#x", tc.name, tc.got, tc.want)
		}
	}

	k.storeU64(b, 0x0102030405060708)
	k.storeU8(b+8, 0xff)
	k.storeU64(b+8, 1) // crosses the arena's end: ignored
	if got := k.loadU64(b); got != 0x0102030405060708 {
		t.Errorf("load_u64 after store: got %#x", got)
	}
	if got := k.loadU8(b + 8); got != 0xff {
		t.Errorf("load_u8 after store: got %#x", got)
	}
	k.free(a)
	if got := k.length(a); got != 0 {
		t.Errorf("length of a freed block: got %d; want 0", got)
	}
	if c := k.alloc(3); c == a {
		t.Errorf("alloc after free reused %d; blocks must not be reused within a call", a)
	}
	k.free(k.input)
	if k.inputLen != 0 {
		t.Errorf("input length after free(input): got %d; want 0", k.inputLen)
	}
	k.output, k.outputLen = b, 9
	if got := string(k.outputBytes()[:8]); got != "\x08\x07\x06\x05\x04\x03\x02\x01" {
		t.Errorf("output: got %q", got)
	}
	k.output, k.outputLen = b, 1<<20
	if k.outputBytes() != nil {
		t.Error("output beyond the arena: got bytes; want none")
	}
	k.err = k.Write([]byte("boom"))
	if got := k.ErrorMessage(); got != "boom" {
		t.Errorf("error message: got %q; want boom", got)
	}
	k.Reset()
	if k.length(b) != 0 || k.inputLen != 0 || k.ErrorMessage() != "" || k.memoryBytes() != 0 {
		t.Error("reset left blocks or registers behind")
	}
	// The arena is kept across calls; its old bytes must not show
	// through a new block, though write fills its blocks without
	// zeroing them first.
	w := k.Write([]byte("01234567abcdefgh"))
	k.Reset()
	if c := k.alloc(16); c != w || k.loadU64(c) != 0 || k.loadU64(c+8) != 0 {
		t.Errorf("a block over the last call's bytes: at %d (was %d), %#x %#x; want zeroed", c, w, k.loadU64(c), k.loadU64(c+8))
	}
}

// TestKernelOutput checks what a call keeps of its output: a copy, unless
// Reset lets the arena go and the output is most of it.
func TestKernelOutput(t *testing.T) {
	tests := []struct {
		name    string
		in, out int
		shared  bool
	}{
		{"none", 10, 0, false},
		{"kept arena: a copy", 100, 50, false},
		{"dropped arena, output most of it: its bytes", 4 * KeepArena, 4 * KeepArena, true},
		{"dropped arena, small output: a copy", 4 * KeepArena, 16, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := NewKernel(1 << 24)
			k.SetInput(make([]byte, tc.in))
			if tc.out > 0 {
				k.output, k.outputLen = k.alloc(uint64(tc.out)), uint64(tc.out)
			}
			got := k.Output()
			if len(got) != tc.out || (tc.out == 0) != (got == nil) {
				t.Fatalf("Output: got %d bytes (nil %v); want %d", len(got), got == nil, tc.out)
			}
			if tc.out == 0 {
				return
			}
			if shared := &got[0] == &k.mem[k.output-kernelBase]; shared != tc.shared {
				t.Errorf("Output shares the arena: got %v; want %v", shared, tc.shared)
			}
		})
	}
}

// FuzzKernel drives the kernel with arbitrary operations, as a hostile
// guest could: nothing may panic, and every block stays inside the arena.
func FuzzKernel(f *testing.F) {
	f.Add([]byte{0, 10, 1, 2, 3, 200, 4, 0xff})
	f.Fuzz(func(t *testing.T, ops []byte) {
		k := &Kernel{limit: 4096}
		k.SetInput(ops)
		for i := 0; i+1 < len(ops); i += 2 {
			v := uint64(ops[i+1]) * 7
			switch ops[i] % 8 {
			case 0:
				if off := k.alloc(v); off != 0 && k.bytes(off, v) == nil {
					t.Fatalf("alloc(%d) = %d outside the arena", v, off)
				}
			case 1:
				k.free(v)
			case 2:
				k.length(v)
			case 3:
				k.storeU64(v, v)
			case 4:
				k.loadU64(v)
			case 5:
				k.inputLoadU64(v)
			case 6:
				k.output, k.outputLen = v, v
				k.outputBytes()
			case 7:
				k.Reset()
			}
		}
	})
}
