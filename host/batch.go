package host

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/host/internal/protocol"
)

// batch collects the responses of one JSON-RPC batch (2025-03-26 only).
// Each slot is written by exactly one goroutine before wg.Done, and read
// only after wg.Wait, so it needs no lock. A nil slot (a notification, a
// response, a cancelled request) gets no entry in the answer.
type batch struct {
	wg      sync.WaitGroup
	out     [][]byte
	served  []served        // by slot: the plugin that answered, for the audit log
	related json.RawMessage // the transport's key for the answer (see handleMessage)
}

// handleBatch serves a JSON array of messages. Only sessions that
// negotiated 2025-03-26 may send one: the revisions before it did not
// define batches and the ones after removed them.
func (s *session) handleBatch(ctx context.Context, raw []byte, related json.RawMessage) {
	elems, err := jsonrpc.SplitBatch(raw)
	if err == nil && s.version() != protocol.V20250326 {
		err = jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: batches are only allowed on sessions that negotiated 2025-03-26 (this one: %s)", s.version())
	}
	if err != nil {
		buf := getBuf()
		*buf = jsonrpc.AppendError(*buf, nil, jsonrpc.ErrorFor(err))
		s.send(*buf, related)
		putBuf(buf)
		return
	}
	b := &batch{out: make([][]byte, len(elems)), served: make([]served, len(elems)), related: related}
	for i, e := range elems {
		msg, err := jsonrpc.Decode(e)
		switch {
		case err != nil:
			s.reject(&msg, err, b, i)
		case msg.Kind == jsonrpc.KindRequest && string(msg.Method) == "initialize":
			s.reply(msg.ID, nil, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "invalid request: initialize must not be part of a batch"), b, i)
		default:
			if t, ok := s.dispatch(ctx, &msg, b, i); ok {
				s.workers.queue(t)
			}
		}
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		b.wg.Wait()
		s.sendBatch(b)
	}()
}

func (s *session) sendBatch(b *batch) {
	buf := getBuf()
	msg := append(*buf, '[')
	n := 0
	var by []served
	for i, part := range b.out {
		if part == nil {
			continue
		}
		if b.served[i].by != nil {
			by = append(by, b.served[i])
		}
		if n > 0 {
			msg = append(msg, ',')
		}
		msg = append(msg, part...)
		n++
	}
	msg = append(msg, ']')
	if n > 0 {
		s.sendServed(msg, b.related, by)
	} else {
		s.unanswered(b.related)
	}
	*buf = msg
	putBuf(buf)
}
