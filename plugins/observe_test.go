package plugins

import (
	"errors"
	"fmt"
	"testing"

	"github.com/mcphost/mcphost/sandbox"
)

func TestFault(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, ""},
		{&sandbox.CallError{Kind: sandbox.KindTrap}, "trap"},
		{fmt.Errorf("plugin %q: %w", "p", &sandbox.CallError{Kind: sandbox.KindTimeout}), "timeout"},
		{&sandbox.CallError{Kind: sandbox.KindOutOfMemory}, "out_of_memory"},
		{&sandbox.CallError{Kind: sandbox.Kind(99)}, "other"},
		{&ValidationError{Tool: "t", What: "arguments"}, "invalid_arguments"},
		{&ValidationError{Tool: "t", What: "structuredContent"}, "invalid_output"},
		{&OutputError{Plugin: "p", Export: "call_tool"}, "bad_output"},
		{&UnsupportedError{Plugin: "p", Export: "call_tool"}, "missing_export"},
		{fmt.Errorf("tool: %w", ErrNotFound), "not_found"},
		{errors.New("boom"), "other"},
	} {
		if got := Fault(tc.err); got != tc.want {
			t.Errorf("Fault(%v) = %q; want %q", tc.err, got, tc.want)
		}
	}
	for k := sandbox.KindTrap; k <= sandbox.KindClosed; k++ {
		if _, ok := faultNames[k]; !ok {
			t.Errorf("sandbox kind %v has no fault name", k)
		}
	}
}
