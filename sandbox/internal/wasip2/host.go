package wasip2

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/tetratelabs/wazero/sys"

	"github.com/mcphost/mcphost/sandbox/internal/component"
)

// State is one instance's WASI 0.2 state: what the guest may see and
// reach. The host fills it from the plugin's limits.
type State struct {
	Env    map[string]string
	Stdout io.Writer
	Stderr io.Writer
	// Preopens are the mounts, each confined by its FS (sandbox/internal/rootfs).
	Preopens []Preopen
	// Config is what wasi:config/store reads, over Env (addConfig).
	Config map[string]string
	// HTTP sends wasi:http requests; nil refuses them all.
	HTTP HTTPDoer
	// Refused reports whether an error of HTTP is the sandbox's egress
	// refusal (allowed_hosts and the address checks, applied when HTTP
	// dials), which the guest sees as HTTP-request-denied.
	Refused func(error) bool
	// Log receives refusals; nil drops them.
	Log *slog.Logger
	// MaxHTTPBytes bounds a response body.
	MaxHTTPBytes int64
	// KV is what wasi:keyvalue serves (keyvalue.go); nil refuses to open
	// a store (access-denied).
	KV KeyValue
}

// Host returns the implementations of the WASI 0.2 functions mcphost
// provides, keyed by [component.Key], for [component.Compile]. Each reads
// its state from the calling instance's State, which must be a *State.
// wasi:sockets is absent on purpose: its functions trap when called.
func Host() map[string]component.HostFunc {
	h := map[string]component.HostFunc{}
	add := func(iface, name string, f component.HostFunc) { h[component.Key(iface, name)] = f }

	// wasi:cli
	add("wasi:cli/environment", "get-environment", func(hc *component.HostCall, _ []any) (any, error) {
		w := stateOf(hc)
		keys := make([]string, 0, len(w.Env))
		for k := range w.Env {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = []any{k, w.Env[k]}
		}
		return out, nil
	})
	add("wasi:cli/environment", "get-arguments", func(*component.HostCall, []any) (any, error) { return []any{}, nil })
	add("wasi:cli/environment", "initial-cwd", func(*component.HostCall, []any) (any, error) { return component.Case{Index: 0}, nil })
	add("wasi:cli/exit", "exit", func(hc *component.HostCall, args []any) (any, error) {
		code := uint32(0)
		if args[0].(component.Case).Index != 0 {
			code = 1
		}
		panic(sys.NewExitError(code))
	})
	add("wasi:cli/stdin", "get-stdin", func(*component.HostCall, []any) (any, error) { return &inputStream{}, nil })
	add("wasi:cli/stdout", "get-stdout", func(hc *component.HostCall, _ []any) (any, error) {
		return &outputStream{w: stateOf(hc).Stdout}, nil
	})
	add("wasi:cli/stderr", "get-stderr", func(hc *component.HostCall, _ []any) (any, error) {
		return &outputStream{w: stateOf(hc).Stderr}, nil
	})
	for _, t := range []string{"stdin", "stdout", "stderr"} {
		add("wasi:cli/terminal-"+t, "get-terminal-"+t, func(*component.HostCall, []any) (any, error) { return component.Case{Index: 0}, nil })
	}

	// wasi:clocks
	add("wasi:clocks/monotonic-clock", "now", func(*component.HostCall, []any) (any, error) { return uint64(monotonic()), nil })
	add("wasi:clocks/monotonic-clock", "resolution", func(*component.HostCall, []any) (any, error) { return uint64(1), nil })
	add("wasi:clocks/monotonic-clock", "subscribe-duration", func(_ *component.HostCall, args []any) (any, error) {
		return &pollable{deadline: monotonic() + int64(min(args[0].(uint64), 1<<62))}, nil
	})
	add("wasi:clocks/monotonic-clock", "subscribe-instant", func(_ *component.HostCall, args []any) (any, error) {
		return &pollable{deadline: int64(min(args[0].(uint64), 1<<62))}, nil
	})
	add("wasi:clocks/wall-clock", "now", func(*component.HostCall, []any) (any, error) {
		now := time.Now()
		return []any{uint64(now.Unix()), uint64(now.Nanosecond())}, nil
	})
	add("wasi:clocks/wall-clock", "resolution", func(*component.HostCall, []any) (any, error) { return []any{uint64(0), uint64(1)}, nil })

	// wasi:random
	randBytes := func(_ *component.HostCall, args []any) (any, error) {
		n := args[0].(uint64)
		if n > 1<<20 {
			return nil, fmt.Errorf("get-random-bytes: %d bytes asked, at most %d", n, 1<<20)
		}
		b := make([]byte, n)
		rand.Read(b)
		return b, nil
	}
	randU64 := func(*component.HostCall, []any) (any, error) {
		var b [8]byte
		rand.Read(b[:])
		return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56, nil
	}
	add("wasi:random/random", "get-random-bytes", randBytes)
	add("wasi:random/random", "get-random-u64", randU64)
	add("wasi:random/insecure", "get-insecure-random-bytes", randBytes)
	add("wasi:random/insecure", "get-insecure-random-u64", randU64)
	add("wasi:random/insecure-seed", "insecure-seed", func(hc *component.HostCall, a []any) (any, error) {
		x, _ := randU64(hc, a)
		y, _ := randU64(hc, a)
		return []any{x, y}, nil
	})

	// wasi:io
	add("wasi:io/error", "[method]error.to-debug-string", func(_ *component.HostCall, args []any) (any, error) {
		return args[0].(*ioError).msg, nil
	})
	add("wasi:io/poll", "[method]pollable.ready", func(_ *component.HostCall, args []any) (any, error) {
		return args[0].(*pollable).ready(), nil
	})
	add("wasi:io/poll", "[method]pollable.block", func(hc *component.HostCall, args []any) (any, error) {
		return nil, args[0].(*pollable).block(hc.Ctx)
	})
	add("wasi:io/poll", "poll", func(hc *component.HostCall, args []any) (any, error) {
		ps := args[0].([]any)
		if len(ps) == 0 {
			return nil, errors.New("poll: empty list")
		}
		for {
			var ready []any
			first := int64(1 << 62)
			for i, p := range ps {
				pl := p.(*pollable)
				if pl.ready() {
					ready = append(ready, uint64(i))
				}
				first = min(first, pl.deadline)
			}
			if len(ready) > 0 {
				return ready, nil
			}
			if err := (&pollable{deadline: first}).block(hc.Ctx); err != nil {
				return nil, err
			}
		}
	})
	streams := "wasi:io/streams"
	add(streams, "[method]input-stream.read", streamRead)
	add(streams, "[method]input-stream.blocking-read", streamRead)
	add(streams, "[method]input-stream.skip", streamSkip)
	add(streams, "[method]input-stream.blocking-skip", streamSkip)
	add(streams, "[method]input-stream.subscribe", func(*component.HostCall, []any) (any, error) { return &pollable{}, nil })
	add(streams, "[method]output-stream.check-write", func(hc *component.HostCall, args []any) (any, error) {
		if err := args[0].(*outputStream).err; err != nil {
			return streamFailed(hc, err), nil
		}
		return component.Case{Index: 0, Val: uint64(maxWrite)}, nil
	})
	write := func(hc *component.HostCall, args []any) (any, error) {
		return args[0].(*outputStream).write(hc, args[1].([]byte)), nil
	}
	add(streams, "[method]output-stream.write", write)
	add(streams, "[method]output-stream.blocking-write-and-flush", write)
	flush := func(hc *component.HostCall, args []any) (any, error) {
		if err := args[0].(*outputStream).err; err != nil {
			return streamFailed(hc, err), nil
		}
		return component.Case{Index: 0}, nil
	}
	add(streams, "[method]output-stream.flush", flush)
	add(streams, "[method]output-stream.blocking-flush", flush)
	zeroes := func(hc *component.HostCall, args []any) (any, error) {
		n := args[1].(uint64)
		if n > maxWrite {
			return nil, fmt.Errorf("write-zeroes: %d bytes, more than check-write allowed", n)
		}
		return args[0].(*outputStream).write(hc, make([]byte, n)), nil
	}
	add(streams, "[method]output-stream.write-zeroes", zeroes)
	add(streams, "[method]output-stream.blocking-write-zeroes-and-flush", zeroes)
	add(streams, "[method]output-stream.subscribe", func(*component.HostCall, []any) (any, error) { return &pollable{}, nil })

	addFilesystem(add)
	addConfig(add)
	addLogging(add)
	addKeyValue(add)
	addHTTP(add)
	return h
}

func stateOf(hc *component.HostCall) *State {
	w, ok := hc.Inst.State.(*State)
	if !ok {
		panic(errors.New("instance has no State state"))
	}
	return w
}

var start = time.Now()

// monotonic is nanoseconds on the monotonic clock since the process began.
func monotonic() int64 { return int64(time.Since(start)) }

// pollable is ready once the monotonic clock passes deadline (0: at once).
type pollable struct{ deadline int64 }

func (p *pollable) ready() bool { return monotonic() >= p.deadline }

// block waits until p is ready or ctx (the call's) ends; the call then
// fails, which is how a guest asleep past its timeout is stopped.
func (p *pollable) block(ctx context.Context) error {
	d := time.Duration(p.deadline - monotonic())
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// maxWrite is what check-write allows at once.
const maxWrite = 1 << 20

// ioError is a wasi:io/error resource.
type ioError struct{ msg string }

// HostBytes is what its handle is charged beside the handle's own cost.
func (e *ioError) HostBytes() int64 { return int64(len(e.msg)) }

// inputStream reads from r; a nil r is at its end at once (stdin).
type inputStream struct {
	r   io.Reader
	c   io.Closer
	eof bool
}

func (s *inputStream) Drop() {
	if s.c != nil {
		s.c.Close()
	}
}

// outputStream writes to w; err is a failure that ends it.
type outputStream struct {
	w   io.Writer
	c   io.Closer
	err error
}

func (s *outputStream) Drop() {
	if s.c != nil {
		s.c.Close()
	}
}

func (s *outputStream) write(hc *component.HostCall, b []byte) any {
	if s.err != nil {
		return streamFailed(hc, s.err)
	}
	if len(b) > maxWrite {
		s.err = fmt.Errorf("write of %d bytes, more than check-write allowed", len(b))
		return streamFailed(hc, s.err)
	}
	if s.w != nil {
		if _, err := s.w.Write(b); err != nil {
			s.err = err
			return streamFailed(hc, err)
		}
	}
	return component.Case{Index: 0}
}

// streamFailed is a stream-error last-operation-failed(err) result.
func streamFailed(hc *component.HostCall, err error) any {
	return component.Case{Index: 1, Val: component.Case{Index: 0, Val: &ioError{msg: err.Error()}}}
}

func streamClosed() any { return component.Case{Index: 1, Val: component.Case{Index: 1}} }

func streamRead(hc *component.HostCall, args []any) (any, error) {
	s := args[0].(*inputStream)
	n := min(args[1].(uint64), maxWrite)
	if s.r == nil || s.eof {
		return streamClosed(), nil
	}
	b := make([]byte, n)
	got, err := s.r.Read(b)
	if got == 0 && err != nil {
		if errors.Is(err, io.EOF) {
			s.eof = true
			return streamClosed(), nil
		}
		return streamFailed(hc, err), nil
	}
	return component.Case{Index: 0, Val: b[:got]}, nil
}

func streamSkip(hc *component.HostCall, args []any) (any, error) {
	res, err := streamRead(hc, args)
	if c, ok := res.(component.Case); ok && c.Index == 0 {
		return component.Case{Index: 0, Val: uint64(len(c.Val.([]byte)))}, nil
	}
	return res, err
}

// enumCase returns the case of enum (or variant) t named name.
func enumCase(t *component.Type, name string) uint32 {
	names := t.Names
	if t.Kind == component.Variant {
		for i, f := range t.Fields {
			if f.Name == name {
				return uint32(i)
			}
		}
	}
	if i := slices.Index(names, name); i >= 0 {
		return uint32(i)
	}
	panic(&component.Trap{Msg: fmt.Sprintf("%s has no case %q", t, name)})
}

// ok is the ok case of a result.
func ok(v any) any { return component.Case{Index: 0, Val: v} }

// flagSet reports whether flags value v has the label name.
func flagSet(t *component.Type, v uint32, name string) bool {
	i := slices.Index(t.Names, name)
	return i >= 0 && v&(1<<i) != 0
}
