package host

import (
	"encoding/json"
	"sync"

	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/plugins"
)

// unanswered reports a request that will get no response to the transport.
func (s *session) unanswered(related json.RawMessage) {
	if f, ok := s.out.(Finisher); ok {
		f.Unanswered(related)
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
	s.respond(id, nil, res, err, b, slot)
}

// answer replies to req, naming in the audit log the plugin that served
// it, if any.
func (s *session) answer(req *request, res any, err error, b *batch, slot int) {
	s.respond(req.id, req.served, res, err, b, slot)
}

func (s *session) respond(id json.RawMessage, by *plugins.Plugin, res any, err error, b *batch, slot int) {
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
		if by != nil {
			b.served[slot] = served{id: id, by: by}
		}
	} else if by != nil {
		s.sendServed(msg, id, []served{{id: id, by: by}})
	} else {
		s.send(msg, id)
	}
	*buf = msg
	putBuf(buf)
}

// send hands one message to the transport, after the audit log.
func (s *session) send(msg []byte, related json.RawMessage) {
	s.sendServed(msg, related, nil)
}

// sendServed is send for the answer to requests that plugins served.
func (s *session) sendServed(msg []byte, related json.RawMessage, by []served) {
	msg = jsonrpc.CompactLine(msg)
	s.srv.audit.record(s.id, "out", nil, by, msg)
	if err := s.out.Send(msg, related); err != nil {
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
