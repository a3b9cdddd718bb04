package streamable

import (
	"context"
	"net/http"
	"strconv"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/internal/protocol"
)

// runHere runs job, the request of POST stream st, on the POST's own
// goroutine, then writes its answer as respond does. A worker would cost
// a goroutine switch each way, and on a new session (every stateless
// POST, every session used for one call) a new goroutine whose stack
// grows again for the call. Whatever must be written while the request
// still runs (its notifications, our requests to the client, a poll, the
// session's end) or the client's going away starts respond on a
// goroutine of its own (see conn.writer), which this one then waits for.
//
// A stream that Options.PollAfter may close before its answer is not run
// here: its response must end while the request runs on, and a handler's
// response ends only when it returns.
func (hs *httpSession) runHere(w http.ResponseWriter, r *http.Request, st *stream, c *conn, job host.Job) {
	hs.mu.Lock()
	polled := st.poll != nil
	hs.mu.Unlock()
	if polled {
		job.Queue()
		hs.respond(w, r, st, c)
		return
	}
	done := make(chan struct{})
	c.writer = func() {
		defer close(done)
		hs.respond(w, r, st, c)
	}
	c.carry.Store(carryArmed)
	hs.mu.Lock()
	missed := c.detached || st.mode == modeSSE // a poll or the session's end came first
	hs.mu.Unlock()
	if missed {
		c.fire()
	}
	stop := context.AfterFunc(r.Context(), c.fire)
	job.Run()
	stop()
	if c.carry.CompareAndSwap(carryArmed, carryNone) {
		hs.respond(w, r, st, c)
		return
	}
	<-done
}

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
