package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/inproc"
	"github.com/mcphost/mcphost/plugins"
)

func cmdCall(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return oneRequest(ctx, args, stdout, stderr, request{
		name: "call", synopsis: "<tool> ['<json args>']", method: "tools/call", target: "name", argsKey: "arguments",
	})
}

func cmdRead(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return oneRequest(ctx, args, stdout, stderr, request{
		name: "read", synopsis: "<uri>", method: "resources/read", target: "uri",
	})
}

func cmdPrompt(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return oneRequest(ctx, args, stdout, stderr, request{
		name: "prompt", synopsis: "<name> ['<json args>']", method: "prompts/get", target: "name", argsKey: "arguments",
	})
}

// request describes a command that sends one MCP request through the
// whole stack (config, builds, sandbox, host) and prints the result.
type request struct {
	name, synopsis string
	method         string
	target         string // the params key of the first argument
	argsKey        string // the params key of the optional JSON argument; "" takes none
}

func oneRequest(ctx context.Context, args []string, stdout, stderr io.Writer, rq request) error {
	fs := newFlags(rq.name, stdout, stderr)
	var c common
	c.register(fs)
	if err := fs.parse(args); err != nil {
		return err
	}
	maxArgs := 1
	if rq.argsKey != "" {
		maxArgs = 2
	}
	if fs.NArg() < 1 || fs.NArg() > maxArgs {
		fs.Usage()
		return errUsage
	}
	params := map[string]json.RawMessage{rq.target: mustJSON(fs.Arg(0))}
	if rq.argsKey != "" {
		raw := "{}"
		if fs.NArg() == 2 {
			raw = fs.Arg(1)
		}
		if !json.Valid([]byte(raw)) {
			return fmt.Errorf("arguments are not valid JSON: %s", raw)
		}
		params[rq.argsKey] = json.RawMessage(raw)
	}
	log, cfg, rt, err := c.setup(ctx, stderr)
	if err != nil {
		return err
	}
	defer rt.close(context.WithoutCancel(ctx))
	// The store serve would use: a plugin's state (KV) and the standing
	// grants are the same ones every replica sees.
	st, err := openStore(ctx, "", cfg, log)
	if err != nil {
		return err
	}
	defer st.Close()
	rt.loader = rt.newLoader(log, nil, false, st.grants(), st, st.name())
	g, err := rt.loader.Build(ctx, cfg, nil)
	if err != nil {
		return err
	}
	reg := plugins.NewRegistry()
	reg.Swap(ctx, g)
	defer reg.Close(context.WithoutCancel(ctx))
	opts := hostOptions(cfg, log, nil)
	opts.Store = st
	srv := host.New(reg, opts)
	defer srv.Close()

	body, err := json.Marshal(params)
	if err != nil {
		return err
	}
	resp, err := inproc.Call(ctx, srv, rq.method, body, func(msg []byte) { fmt.Fprintf(stderr, "%s\n", msg) })
	if err != nil {
		return err
	}
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(resp, &r); err != nil {
		return fmt.Errorf("decode response: %w", err)
	}
	if r.Error != nil {
		return withFailures(fmt.Errorf("%s (JSON-RPC error %d)", r.Error.Message, r.Error.Code), g.Failures)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, r.Result, "", "  "); err != nil {
		return err
	}
	fmt.Fprintln(stdout, out.String())
	var res struct {
		IsError bool `json:"isError"`
	}
	if json.Unmarshal(r.Result, &res) == nil && res.IsError {
		return errToolFailed
	}
	return nil
}

// withFailures adds to err the plugins that failed to load: the tool,
// resource or prompt asked for is most likely one of theirs, and "unknown
// tool" alone would hide why.
func withFailures(err error, failures []plugins.Failure) error {
	if len(failures) == 0 {
		return err
	}
	var b strings.Builder
	for _, f := range failures {
		fmt.Fprintf(&b, "\nplugin %q failed to load: %v", f.Plugin, f.Err)
	}
	return fmt.Errorf("%w%s", err, b.String())
}

func mustJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}
