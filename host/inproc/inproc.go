package inproc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mcphost/mcphost/host"
)

// Call serves one request to srv on a private in-process session that has been
// initialized like a real client's (protocol 2025-11-25, no client
// capabilities) and returns the raw JSON-RPC response. It runs the same
// dispatch path as every transport, so `mcphost call` exercises the whole
// stack. Notifications the request emits (logs, progress) are passed to
// notify, which may be nil.
func Call(ctx context.Context, srv *host.Server, method string, params json.RawMessage, notify func(msg []byte)) (json.RawMessage, error) {
	out := &localOut{resp: make(chan []byte, 1), notify: notify}
	conn := srv.Connect(out, host.ConnInfo{ID: "local"})
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	conn.Handle(ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"mcphost-call","version":"1"}}}`))
	if r := <-out.resp; !bytes.Contains(r, []byte(`"result"`)) {
		return nil, fmt.Errorf("initialize: %s", r)
	}
	conn.Handle(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	req, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      int             `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params,omitempty"`
	}{"2.0", 1, method, params})
	if err != nil {
		return nil, err
	}
	conn.Handle(ctx, req)
	select {
	case r := <-out.resp:
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

var _ host.Outbound = (*localOut)(nil)

// localOut collects what a local session sends: responses go to resp,
// everything else to notify.
type localOut struct {
	mu     sync.Mutex
	resp   chan []byte
	notify func([]byte)
}

func (o *localOut) Send(msg []byte, _ json.RawMessage) error {
	m := bytes.Clone(msg)
	var probe struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(m, &probe) == nil && probe.Method == "" && len(probe.ID) > 0 {
		o.resp <- m
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.notify != nil {
		o.notify(m)
	}
	return nil
}
