package host

import (
	"io"
	"sync"
	"time"

	"github.com/mcphost/mcphost/abi/jsonscan"
	"github.com/mcphost/mcphost/host/jsonrpc"
)

// auditLog appends every message in and out, one JSON line each:
//
//	{"time":"<RFC 3339 nano>","dir":"in"|"out","session":"<id>","msg":<message>}
//
// A message in from an authenticated caller (see [Caller]) also has
// "sub" and "client_id" after "session": who sent it, as its token says.
//
// A line that is not JSON is recorded as a JSON string, so the log itself
// always parses. Writes are serialized; a nil *auditLog records nothing.
type auditLog struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

func newAuditLog(w io.Writer) *auditLog {
	if w == nil {
		return nil
	}
	return &auditLog{w: w}
}

func (a *auditLog) record(session, dir string, c *Caller, msg []byte) {
	if a == nil {
		return
	}
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	b := append(a.buf[:0], `{"time":"`...)
	b = now.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","dir":"`...)
	b = append(b, dir...)
	b = append(b, `","session":`...)
	b = jsonscan.AppendString(b, session)
	if c != nil {
		b = append(b, `,"sub":`...)
		b = jsonscan.AppendString(b, c.Subject)
		b = append(b, `,"client_id":`...)
		b = jsonscan.AppendString(b, c.ClientID)
	}
	b = append(b, `,"msg":`...)
	if jsonscan.Valid(msg) {
		b = append(b, jsonrpc.CompactLine(msg)...)
	} else {
		b = jsonscan.AppendString(b, string(msg))
	}
	b = append(b, '}', '\n')
	a.w.Write(b) // best effort: auditing must not stop the server
	if cap(b) <= 1<<20 {
		a.buf = b[:0]
	}
}
