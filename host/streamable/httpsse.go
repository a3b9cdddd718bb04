package streamable

import (
	"net/http"
	"strconv"

	"github.com/mcphost/mcphost/host/internal/protocol"
)

// respond writes what comes back for a POST's requests: the response as
// JSON if it is the first message for them, an SSE stream otherwise.
func (hs *httpSession) respond(w http.ResponseWriter, r *http.Request, st *stream, c *conn) {
	for {
		hs.mu.Lock()
		mode, body, prime, finished, detached, ended := st.mode, st.json, st.primeSeq, st.finished, c.detached, hs.ended
		hs.mu.Unlock()
		switch {
		case mode == modeJSON && hs.conn.Stateless():
			writeStatus(w, statelessStatus(body), body)
			return
		case mode == modeJSON:
			writeJSON(w, body)
			return
		case mode == modeSSE:
			hs.pump(w, r, st, c, prime, -1)
			return
		case finished:
			// Cancelled before any message: an empty stream says so
			// without a response.
			hs.detach(st, c)
			startSSE(w)
			return
		case detached:
			hs.detach(st, c)
			if ended == endShutdown {
				unavailable(w)
			} else {
				httpError(w, http.StatusNotFound, codeSessionNotFound, "Session not found")
			}
			return
		}
		select {
		case <-c.wake:
		case <-r.Context().Done():
			hs.detach(st, c) // the client went away: the request is cancelled
			return
		}
	}
}

// pump writes st to w as SSE: a priming event numbered prime (when not
// negative), then the events numbered after after, as they come, until
// the stream is finished, the connection is detached, or the client goes
// away. Events evicted from the replay buffer before they were written
// are skipped: the gap in the numbers shows it.
func (hs *httpSession) pump(w http.ResponseWriter, r *http.Request, st *stream, c *conn, prime, after int64) {
	defer hs.detach(st, c)
	startSSE(w)
	rc := http.NewResponseController(w)
	buf := make([]byte, 0, 512)
	if prime >= 0 {
		buf = append(buf, "id: "...)
		buf = appendEventID(buf, st.num, prime)
		buf = append(buf, "\nretry: "...)
		buf = strconv.AppendInt(buf, hs.h.opts.Retry.Milliseconds(), 10)
		buf = append(buf, "\ndata: \n\n"...)
		after = max(after, prime)
	} else if hs.conn.Version() >= protocol.V20251125 {
		buf = append(buf, "retry: "...)
		buf = strconv.AppendInt(buf, hs.h.opts.Retry.Milliseconds(), 10)
		buf = append(buf, "\n\n"...)
	}
	if len(buf) > 0 {
		if _, err := w.Write(buf); err != nil {
			return
		}
	}
	if rc.Flush() != nil {
		return
	}
	var evs []event
	for {
		hs.mu.Lock()
		evs = hs.eventsAfter(evs[:0], st, after)
		finished, detached := st.finished, c.detached
		hs.mu.Unlock()
		for _, e := range evs {
			buf = append(buf[:0], "id: "...)
			buf = appendEventID(buf, st.num, e.seq)
			buf = append(buf, "\nevent: message\ndata: "...)
			buf = append(buf, e.data...)
			buf = append(buf, "\n\n"...)
			if _, err := w.Write(buf); err != nil {
				return
			}
			after = e.seq
		}
		clear(evs) // do not pin event data between rounds
		if len(evs) > 0 && rc.Flush() != nil {
			return
		}
		if cap(buf) > 64<<10 {
			buf = make([]byte, 0, 512)
		}
		if finished || detached {
			return
		}
		select {
		case <-c.wake:
		case <-r.Context().Done():
			return
		}
	}
}

// startSSE writes the headers of an SSE response.
func startSSE(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", ctEventSSE)
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
}
