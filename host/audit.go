package host

import (
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/mcphost/mcphost/abi/jsonscan"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/plugins"
)

// auditLog appends every message in and out, one JSON line each:
//
//	{"time":"<RFC 3339 nano>","dir":"in"|"out","session":"<id>","msg":<message>}
//
// A message in from an authenticated caller (see [Caller]) also has
// "sub" and "client_id" after "session": who sent it, as its token says.
//
// The answer to a request a plugin served (tools/call, resources/read,
// prompts/get, and tasks/get of a task a tool runs) names the code that
// answered, after "session": "plugin", "sha256" (the SHA-256 of its code;
// absent for an in-process module, which has none) and, when the plugin
// was verified against a [plugin.signature] table, "signer" (its identity
// and issuer, or its key, the digest it signed and where the signature
// was found). A batch's answer (2025-03-26) has instead "served": one
// {"id", "plugin", "sha256", "signer"} per element a plugin served.
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

// served is the plugin that answered the request with this id.
type served struct {
	id json.RawMessage
	by *plugins.Plugin
}

func (a *auditLog) record(session, dir string, c *Caller, by []served, msg []byte) {
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
	if len(msg) > 0 && msg[0] == '[' && len(by) > 0 {
		b = append(b, `,"served":[`...)
		for i, s := range by {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":`...)
			b = append(b, s.id...)
			b = appendServed(b, s.by)
			b = append(b, '}')
		}
		b = append(b, ']')
	} else if len(by) == 1 {
		b = appendServed(b, by[0].by)
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

// appendServed appends the members naming p's code: "plugin", "sha256"
// and "signer", each after a comma.
func appendServed(b []byte, p *plugins.Plugin) []byte {
	b = append(b, `,"plugin":`...)
	b = jsonscan.AppendString(b, p.Name)
	if d := p.Digest(); d != "" {
		b = append(b, `,"sha256":`...)
		b = jsonscan.AppendString(b, d)
	}
	if sg := p.Signer(); sg != nil {
		if js, err := json.Marshal(sg); err == nil {
			b = append(b, `,"signer":`...)
			b = append(b, js...)
		}
	}
	return b
}
