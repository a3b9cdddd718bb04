package main

import (
	"time"

	guest "github.com/mcphost/mcphost/sdk-guest"
)

// spins counts the iterations of ignore_cancel's loop, so the compiler
// keeps it.
var spins int

func init() {
	guest.AddTool(guest.Tool{Name: "wait_cancel", Description: "Waits until the client cancels the call, then returns without counting."},
		func(ctx *guest.Context, _ none) (*guest.Result, error) {
			guest.Logf(guest.LevelInfo, "wait_cancel: waiting for the cancellation")
			for ctx.Err() == nil {
				time.Sleep(10 * time.Millisecond) // cut short when the call is cancelled
			}
			guest.Logf(guest.LevelInfo, "wait_cancel: cancelled, returning")
			return nil, ctx.Err()
		})
	guest.AddTool(guest.Tool{Name: "ignore_cancel", Description: "Computes forever, never asking whether the call was cancelled."},
		func(ctx *guest.Context, _ none) (*guest.Result, error) {
			guest.Logf(guest.LevelInfo, "ignore_cancel: computing")
			for {
				spins++
			}
		})
}
