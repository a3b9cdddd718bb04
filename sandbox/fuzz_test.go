package sandbox

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
)

var (
	fuzzOnce sync.Once
	fuzzMod  *Module
	fuzzErr  error
)

// FuzzEcho feeds arbitrary bytes through the Extism input and output path:
// the host must never panic, every error must be a *CallError, and what
// comes back must be what went in.
func FuzzEcho(f *testing.F) {
	needGuest(f)
	fuzzOnce.Do(func() {
		fuzzMod, fuzzErr = testEngine.Load(context.Background(), "fuzz", guestWasm, Limits{Instances: 2, MaxInputBytes: 1 << 16})
	})
	if fuzzErr != nil {
		f.Fatal(fuzzErr)
	}
	f.Add([]byte(""))
	f.Add([]byte("hello"))
	f.Add([]byte{0, 1, 2, 0xff, 0xfe, '\n'})
	f.Add(bytes.Repeat([]byte{0xaa}, 1<<16+1))
	f.Add([]byte(`{"op":"echo","msg":"hello"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := fuzzMod.Call(context.Background(), "echo", in)
		if err != nil {
			var ce *CallError
			if !errors.As(err, &ce) {
				t.Fatalf("got %v (%T); want *CallError", err, err)
			}
			if len(in) <= 1<<16 || ce.Kind != KindBadInput {
				t.Fatalf("echo of %d bytes: %v", len(in), err)
			}
			return
		}
		if !bytes.Equal(out, in) {
			t.Fatalf("echo: got %d bytes; want the %d sent", len(out), len(in))
		}
	})
}
