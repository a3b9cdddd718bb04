// Command counter is a plugin that keeps state, for the tests of
// cmd/mcphost: count adds one to a count held in its instance and returns
// it; confirmed_count asks the client to confirm first (a server→client
// request in 2025-11-25, an input_required round in 2026-07-28) and
// counts only once confirmed. fetch GETs a URL through guest.HTTP and
// store sets a key of its key-value state; both return the host's refusal
// as an error result. A count that starts over shows an instance thrown
// away.
package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
)

func main() {} // required, never called: the SDK defines the exports

var count int

type none struct{}

type fetchIn struct {
	URL string `json:"url"`
}

type storeIn struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

func init() {
	guest.AddTool(guest.Tool{Name: "count", Description: "Adds one to the count and returns it."},
		func(ctx *guest.Context, _ none) (*guest.Result, error) {
			count++
			return guest.TextResult(strconv.Itoa(count)), nil
		})
	guest.AddTool(guest.Tool{Name: "confirmed_count", Description: "Asks to confirm, then adds one to the count and returns it."},
		func(ctx *guest.Context, _ none) (*guest.Result, error) {
			meta, _ := json.Marshal(map[string]string{abi.MetaInputKey: "confirm"})
			r, err := ctx.Elicit(abi.ElicitParams{Message: "Count one more?", Meta: meta,
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)})
			if err != nil {
				return nil, err
			}
			if r.Action != "accept" {
				return nil, fmt.Errorf("not confirmed: %s", r.Action)
			}
			count++
			return guest.TextResult(strconv.Itoa(count)), nil
		})
	guest.AddTool(guest.Tool{Name: "fetch", Description: "GETs a URL and returns its status and body."},
		func(ctx *guest.Context, in fetchIn) (*guest.Result, error) {
			resp, err := guest.HTTP(&guest.HTTPRequest{URL: in.URL})
			if err != nil {
				var he *guest.HostError
				return guest.Errorf("fetch %s: %v (refused: %v)", in.URL, err, errors.As(err, &he) && he.Refused), nil
			}
			return guest.TextResult(fmt.Sprintf("%d %s", resp.Status, resp.Body)), nil
		})
	guest.AddTool(guest.Tool{Name: "store", Description: "Sets key to value in the plugin's key-value state."},
		func(ctx *guest.Context, in storeIn) (*guest.Result, error) {
			if err := guest.KV.Set(in.Key, []byte(in.Value)); err != nil {
				return guest.Errorf("store %s: %v", in.Key, err), nil
			}
			return guest.TextResult("stored"), nil
		})
}
