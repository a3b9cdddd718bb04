package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
)

// The fixtures of the tasks extension's scenarios (tasks-*). A tool with
// TaskSupport runs as a task for a client that declares the extension: it
// becomes one when it first reports progress, and what it asks before
// that is gathered by input_required rounds on the tools/call itself.

// GreetIn is the input of greet.
type GreetIn struct {
	Name string `json:"name" jsonschema:"Who to greet"`
}

// ComputeIn is the input of slow_compute.
type ComputeIn struct {
	Seconds float64 `json:"seconds" jsonschema:"How long to work, in seconds"`
	Label   string  `json:"label,omitempty" jsonschema:"A label echoed in the result"`
}

// FileIn is the input of confirm_delete.
type FileIn struct {
	Filename string `json:"filename" jsonschema:"The file to delete"`
}

const confirmSchema = `{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`

// work sleeps for d in steps, reporting progress, so a cancelled task
// stops within a step.
func work(ctx *guest.Context, d time.Duration) error {
	const step = 100 * time.Millisecond
	n := int(d / step)
	for i := 0; i < n; i++ {
		if err := ctx.Progress(float64(i), float64(n), fmt.Sprintf("working: step %d of %d", i+1, n)); err != nil {
			return err
		}
		time.Sleep(step)
	}
	return nil
}

func confirm(ctx *guest.Context, message string) (bool, error) {
	r, err := ctx.Elicit(abi.ElicitParams{Message: message, RequestedSchema: []byte(confirmSchema)})
	if err != nil {
		return false, err
	}
	return r.Action == "accept", nil
}

func registerTaskTools() {
	guest.AddTool(guest.Tool{Name: "greet", Description: "Greets someone at once (never a task)"},
		func(_ *guest.Context, in GreetIn) (*guest.Result, error) {
			return guest.TextResult("Hello, " + in.Name + "!"), nil
		})
	guest.AddTool(guest.Tool{Name: "slow_compute", Description: "Works for the given number of seconds, as a task", TaskSupport: abi.TaskOptional},
		func(ctx *guest.Context, in ComputeIn) (*guest.Result, error) {
			if in.Seconds > 0 {
				if err := ctx.Progress(0, 0, "started"); err != nil {
					return nil, err
				}
			}
			if err := work(ctx, time.Duration(in.Seconds*float64(time.Second))); err != nil {
				return nil, err
			}
			return guest.TextResult(fmt.Sprintf("computed %s after %gs", in.Label, in.Seconds)), nil
		})
	guest.AddTool(guest.Tool{Name: "failing_job", Description: "Fails as a task, with a tool error", TaskSupport: abi.TaskRequired},
		func(ctx *guest.Context, _ none) (*guest.Result, error) {
			if err := ctx.Progress(0, 0, "started"); err != nil {
				return nil, err
			}
			return nil, errors.New("the job failed")
		})
	guest.AddTool(guest.Tool{Name: "protocol_error_job", Description: "Needs the client's roots inside a task: fails with -32021 for a client without them", TaskSupport: abi.TaskOptional},
		func(ctx *guest.Context, _ none) (*guest.Result, error) {
			if err := ctx.Progress(0, 0, "started"); err != nil {
				return nil, err
			}
			roots, err := ctx.Roots()
			if err != nil {
				return nil, err
			}
			return guest.TextResult(fmt.Sprintf("%d roots", len(roots))), nil
		})
	guest.AddTool(guest.Tool{Name: "confirm_delete", Description: "Asks, inside the task, to confirm deleting a file", TaskSupport: abi.TaskOptional},
		func(ctx *guest.Context, in FileIn) (*guest.Result, error) {
			if err := ctx.Progress(0, 0, "waiting for confirmation"); err != nil {
				return nil, err
			}
			ok, err := confirm(ctx, "Delete "+in.Filename+"?")
			if err != nil {
				return nil, err
			}
			if !ok {
				return guest.TextResult("kept " + in.Filename), nil
			}
			return guest.TextResult("deleted " + in.Filename), nil
		})
	guest.AddTool(guest.Tool{Name: "multi_input", Description: "Asks two questions at once inside the task", TaskSupport: abi.TaskOptional},
		func(ctx *guest.Context, _ none) (*guest.Result, error) {
			if err := ctx.Progress(0, 0, "asking"); err != nil {
				return nil, err
			}
			// Both are asked before either answer is needed, so a task
			// surfaces both at once.
			a, errA := askName(ctx, "first", "First name?")
			b, errB := askName(ctx, "second", "Second name?")
			if err := errors.Join(errA, errB); err != nil {
				return nil, err
			}
			return guest.TextResult("got " + a + " and " + b), nil
		})
	guest.AddTool(guest.Tool{Name: "test_tool_with_task", Description: "Asks the user's name, then works on it as a task", TaskSupport: abi.TaskRequired},
		func(ctx *guest.Context, _ none) (*guest.Result, error) {
			// Asked before the first progress: answered on the tools/call.
			name, err := askName(ctx, "user_name", "What is your name?")
			if err != nil {
				return nil, err
			}
			if err := work(ctx, 200*time.Millisecond); err != nil {
				return nil, err
			}
			return guest.TextResult("Hello, " + name + ", from a task!"), nil
		})
}
