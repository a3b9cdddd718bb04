package main

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
)

func main() {}

// TextIn is the input of echo.
type TextIn struct {
	Text string `json:"text" jsonschema:"the text to return"`
}

// BigIn is the input of big.
type BigIn struct {
	Bytes int `json:"bytes" jsonschema:"how many bytes of text to return"`
}

// SlowIn is the input of slow.
type SlowIn struct {
	MS int `json:"ms" jsonschema:"how long to sleep, in milliseconds"`
}

// FloodIn is the input of flood.
type FloodIn struct {
	Count int `json:"count" jsonschema:"how many log messages to send"`
}

// ExitIn is the input of exit.
type ExitIn struct {
	Code int `json:"code,omitempty" jsonschema:"the exit code (default 3)"`
}

// Sinks keep the compiler from optimising the faults away.
var (
	spins uint64
	hoard [][]byte
)

func init() {
	none := func(name, desc string, h func(*guest.Context, struct{}) (*guest.Result, error)) {
		guest.AddTool(guest.Tool{Name: name, Description: desc}, h)
	}
	none("panic", "Traps: dereferences a nil pointer outside the SDK's panic recovery, killing the instance.",
		func(*guest.Context, struct{}) (*guest.Result, error) {
			guest.Unrecovered(nilDeref)
			return guest.TextResult("unreachable"), nil
		})
	none("recovered_panic", "Panics inside the handler; the SDK recovers and returns an isError result.",
		func(*guest.Context, struct{}) (*guest.Result, error) {
			panic("faulty: deliberate panic")
		})
	none("stack_overflow", "Traps: recurses until the Go runtime aborts with a stack overflow (a fatal error, not a panic).",
		func(*guest.Context, struct{}) (*guest.Result, error) {
			debug.SetMaxStack(1 << 20) // fail fast instead of growing to the 1 GB default
			return guest.TextResult(string(rune(recurse(1)))), nil
		})
	none("loop", "Never returns: spins forever, so the host's timeout must stop it.",
		func(*guest.Context, struct{}) (*guest.Result, error) {
			for {
				spins++
			}
		})
	none("eat", "Allocates memory until the instance runs out and the Go runtime aborts.",
		func(*guest.Context, struct{}) (*guest.Result, error) {
			for {
				b := make([]byte, 1<<20)
				for i := 0; i < len(b); i += 4096 {
					b[i] = 1 // touch every page
				}
				hoard = append(hoard, b)
			}
		})
	none("junk", "Returns output that is not JSON, to test the host's handling of malformed guest output.",
		func(ctx *guest.Context, _ struct{}) (*guest.Result, error) {
			ctx.WriteRawOutput([]byte(`{"content":[{"type":"text","text":"unterminated`))
			return nil, nil
		})
	guest.AddTool(guest.Tool{Name: "big", Description: "Returns a text block of the requested size, to test output limits."},
		func(_ *guest.Context, in BigIn) (*guest.Result, error) {
			if in.Bytes < 0 {
				return guest.Error("bytes must not be negative"), nil
			}
			return guest.TextResult(strings.Repeat("x", in.Bytes)), nil
		})
	guest.AddTool(guest.Tool{Name: "slow", Description: "Sleeps for the given time, then returns how long it slept."},
		func(_ *guest.Context, in SlowIn) (*guest.Result, error) {
			start := time.Now()
			time.Sleep(time.Duration(in.MS) * time.Millisecond)
			return guest.TextResult("slept " + time.Since(start).Round(time.Millisecond).String()), nil
		})
	guest.AddTool(guest.Tool{Name: "echo", Description: "Behaves: returns its text, to check the plugin still works after a fault."},
		func(_ *guest.Context, in TextIn) (*guest.Result, error) { return guest.TextResult(in.Text), nil })
	guest.AddTool(guest.Tool{Name: "flood", Description: "Sends count log messages as fast as it can, to test the host's rate limit on what a call sends."},
		func(ctx *guest.Context, in FloodIn) (*guest.Result, error) {
			sent := 0
			for i := range in.Count {
				if ctx.Log(guest.LevelInfo, "flood "+strconv.Itoa(i)) == nil {
					sent++
				}
			}
			return guest.TextResult("sent " + strconv.Itoa(sent)), nil
		})
	guest.AddTool(guest.Tool{Name: "exit", Description: "Calls os.Exit (WASI proc_exit), which closes the instance."},
		func(_ *guest.Context, in ExitIn) (*guest.Result, error) {
			code := in.Code
			if code == 0 {
				code = 3
			}
			os.Exit(code)
			return nil, nil
		})

	guest.AddResource(abi.Resource{URI: "faulty://trap", Name: "trap", MimeType: "text/plain",
		Description: "Reading it traps (nil dereference outside the SDK's recovery)."},
		func(*guest.Context, string) (*abi.ReadResourceResult, error) {
			guest.Unrecovered(nilDeref)
			return nil, nil
		})
	guest.AddResource(abi.Resource{URI: "faulty://ok", Name: "ok", MimeType: "text/plain",
		Description: "A resource that reads normally."},
		func(_ *guest.Context, uri string) (*abi.ReadResourceResult, error) {
			return guest.TextResource(uri, "text/plain", "fine"), nil
		})
	guest.AddPrompt(abi.Prompt{Name: "trap", Description: "Rendering it traps (nil dereference outside the SDK's recovery)."},
		func(*guest.Context, map[string]string) (*abi.GetPromptResult, error) {
			guest.Unrecovered(nilDeref)
			return nil, nil
		})
}

var nilPtr *int

func nilDeref() { *nilPtr = 1 }

// recurse never returns normally; its frames are big so the stack limit
// is reached quickly.
func recurse(n int) int {
	var pad [256]byte
	pad[n%256] = byte(n)
	return recurse(n+1) + int(pad[(n+1)%256])
}
