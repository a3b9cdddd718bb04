package host

import (
	"encoding/json"
	"sync"

	"github.com/mcphost/mcphost/host/jsonrpc"
)

// outbound is a session's way back to its client; each transport provides
// one. send delivers one complete JSON-RPC message or batch array, without
// a trailing newline, compact (no newlines), and must not keep msg after it
// returns. related is the id of the client request the message belongs to
// (a response's own id, or the request a progress or log notification or a
// server→client request is about); nil means the message belongs to no
// request. Streamable HTTP routes on it; stdio ignores it. send may be
// called from many goroutines.
type outbound interface {
	send(msg []byte, related json.RawMessage) error
}

// finisher is implemented by transports that hold a connection open for
// each request until its response (Streamable HTTP). unanswered tells them
// that the request related to id ended without one (it was cancelled), so
// that the connection can be closed instead of waiting forever.
type finisher interface {
	unanswered(related json.RawMessage)
}

// unanswered reports a request that will get no response to the transport.
func (s *session) unanswered(related json.RawMessage) {
	if f, ok := s.out.(finisher); ok {
		f.unanswered(related)
	}
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) <= 64<<10 {
		*b = (*b)[:0]
		bufPool.Put(b)
	}
}

// reply encodes a response (or error) to id and sends it, or stores it in
// its batch slot.
func (s *session) reply(id json.RawMessage, res any, err error, b *batch, slot int) {
	buf := getBuf()
	msg := *buf
	if err == nil {
		body, merr := jsonrpc.MarshalResult(res)
		if merr == nil {
			msg = jsonrpc.AppendResponse(msg, id, body)
		} else {
			err = merr
		}
	}
	if err != nil {
		msg = jsonrpc.AppendError(msg, id, jsonrpc.ErrorFor(err))
	}
	if b != nil {
		b.out[slot] = append([]byte(nil), msg...)
	} else {
		s.send(msg, id)
	}
	*buf = msg
	putBuf(buf)
}

// send hands one message to the transport, after the audit log.
func (s *session) send(msg []byte, related json.RawMessage) {
	msg = jsonrpc.CompactLine(msg)
	s.srv.audit.record(s.id, "out", msg)
	if err := s.out.send(msg, related); err != nil {
		s.log.Debug("send failed", "err", err)
	}
}

// notify sends a notification to this session.
func (s *session) notify(method string, params []byte, related json.RawMessage) {
	buf := getBuf()
	*buf = jsonrpc.AppendNotification(*buf, method, params)
	s.send(*buf, related)
	putBuf(buf)
}
