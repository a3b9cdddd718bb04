package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/plugins"
)

func cmdCall(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("call", stderr)
	var c common
	c.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: mcphost call [flags] <tool> ['<json args>']")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fs.Usage()
		return errUsage
	}
	tool, rawArgs := fs.Arg(0), "{}"
	if fs.NArg() == 2 {
		rawArgs = fs.Arg(1)
	}
	if !json.Valid([]byte(rawArgs)) {
		return fmt.Errorf("arguments are not valid JSON: %s", rawArgs)
	}
	log, cfg, rt, err := c.setup(ctx, stderr)
	if err != nil {
		return err
	}
	defer rt.close(context.WithoutCancel(ctx))
	g, err := rt.loader.Build(ctx, cfg, nil)
	if err != nil {
		return err
	}
	reg := plugins.NewRegistry()
	reg.Swap(ctx, g)
	defer reg.Close(context.WithoutCancel(ctx))
	srv := host.New(reg, hostOptions(cfg, log, nil))
	defer srv.Close()

	params, err := json.Marshal(map[string]json.RawMessage{"name": mustJSON(tool), "arguments": json.RawMessage(rawArgs)})
	if err != nil {
		return err
	}
	resp, err := srv.Call(ctx, "tools/call", params, func(msg []byte) { fmt.Fprintf(stderr, "%s\n", msg) })
	if err != nil {
		return err
	}
	var r struct {
		Result *struct {
			IsError bool `json:"isError"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp, &r); err != nil {
		return fmt.Errorf("decode response: %w", err)
	}
	if r.Error != nil {
		return fmt.Errorf("%s (JSON-RPC error %d)", r.Error.Message, r.Error.Code)
	}
	var full struct {
		Result json.RawMessage `json:"result"`
	}
	_ = json.Unmarshal(resp, &full)
	var out bytes.Buffer
	if err := json.Indent(&out, full.Result, "", "  "); err != nil {
		return err
	}
	fmt.Fprintln(stdout, out.String())
	if r.Result != nil && r.Result.IsError {
		return errToolFailed
	}
	return nil
}

func mustJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
