package guest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// cancelHost is a fakeHost whose call is cancelled from the after+1th
// question on.
type cancelHost struct {
	*fakeHost
	asks, after int
}

func (h *cancelHost) Cancelled() bool {
	h.asks++
	return h.asks > h.after
}

// TestContextCancelled: a handler's Context is a context.Context whose Err
// and Done ask the host each time until it says the call is cancelled,
// then stay so; HTTP then fails without reaching the host; a host that
// cannot cancel never does.
func TestContextCancelled(t *testing.T) {
	fh := useRegistry(t)
	h := &cancelHost{fakeHost: fh, after: 3}
	SetHostForTesting(h) // useRegistry's cleanup restores the host before it
	httpCalls := 0
	fh.http = func(*HTTPRequest) (*HTTPResponse, error) { httpCalls++; return &HTTPResponse{Status: 200}, nil }
	AddTool(Tool{Name: "loop"}, func(ctx *Context, _ struct{}) (*Result, error) {
		var c context.Context = ctx
		for i := 0; ; i++ {
			select {
			case <-c.Done():
				_, herr := HTTP(&HTTPRequest{URL: "http://example.com/"})
				return TextResult(fmt.Sprintf("%d %v %v", i, c.Err(), errors.Is(herr, context.Canceled))), nil
			default:
			}
		}
	})
	out, err := std.dispatch("call_tool", []byte(`{"request":{"name":"loop"},"context":{"id":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"content":[{"type":"text","text":"3 context canceled true"}]}`; string(out) != want {
		t.Errorf("got %s; want %s (cancelled at the fourth question; HTTP refused with context.Canceled)", out, want)
	}
	if httpCalls != 0 {
		t.Errorf("HTTP reached the host %d times after the cancellation; want 0", httpCalls)
	}
	asks := h.asks
	if err := (&Context{cancelled: true}).Err(); err != context.Canceled || h.asks != asks {
		t.Errorf("Err once cancelled: got %v after %d more questions; want %v without asking", err, h.asks-asks, context.Canceled)
	}

	// Once cancelled, the helpers that talk to the client fail at once
	// with context.Canceled, so a loop reporting progress stops.
	fh.mu.Lock()
	before := len(fh.calls)
	fh.mu.Unlock()
	cc := &Context{Context: abi.Context{Meta: []byte(`{"progressToken":1}`)}}
	_, eerr := cc.Elicit(abi.ElicitParams{Message: "name?"})
	_, serr := cc.Sample(abi.CreateMessageParams{MaxTokens: 1})
	for what, err := range map[string]error{"Progress": cc.Progress(1, 2, "step"), "Elicit": eerr, "Sample": serr} {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s after the cancellation: got %v; want an error wrapping context.Canceled", what, err)
		}
	}
	fh.mu.Lock()
	if n := len(fh.calls) - before; n != 0 {
		t.Errorf("%d host calls after the cancellation (%v); want 0", n, fh.calls[before:])
	}
	fh.mu.Unlock()

	SetHostForTesting(fh) // a host without Cancelled
	ctx := &Context{}
	if err := ctx.Err(); err != nil {
		t.Errorf("Err on a host that cannot cancel: got %v; want nil", err)
	}
	select {
	case <-ctx.Done():
		t.Error("Done on a host that cannot cancel is closed; want it open")
	default:
	}
}
