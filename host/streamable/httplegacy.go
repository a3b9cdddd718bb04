package streamable

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"sync"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
)

// The HTTP+SSE transport of 2024-11-05, kept for old clients: GET /sse
// opens a session and its one stream, whose first event ("endpoint") says
// where to POST; each POST to /messages?sessionId=… gets 202, and every
// message of the session, responses included, goes out on the stream as a
// "message" event. The session ends with the stream.

// maxLegacyQueue bounds the messages waiting for a legacy stream. A client
// that stops reading its stream loses the session rather than the server
// its memory.
const maxLegacyQueue = 1024

type legacySession struct {
	id    string
	owner owner // who opened it; nobody else may post to it (principal.go)
	conn  *host.Conn
	log   *slog.Logger
	serve func(r *http.Request, raw []byte)
	// cancel ends the session's lifetime context: requests in flight are
	// cancelled.
	cancel context.CancelFunc

	mu    sync.Mutex
	queue [][]byte
	ended bool
	wake  chan struct{}
	once  sync.Once
}

func (ls *legacySession) Send(msg []byte, _ json.RawMessage) error {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.ended {
		return errSessionEnded
	}
	if len(ls.queue) >= maxLegacyQueue {
		ls.log.Warn("client is not reading its SSE stream; ending the session")
		ls.ended = true
	} else {
		ls.queue = append(ls.queue, append([]byte(nil), msg...))
	}
	select {
	case ls.wake <- struct{}{}:
	default:
	}
	return nil
}

// end cancels the session's requests, stops its stream and closes it.
func (ls *legacySession) end() {
	ls.once.Do(func() {
		ls.cancel()
		ls.mu.Lock()
		ls.ended = true
		ls.mu.Unlock()
		select {
		case ls.wake <- struct{}{}:
		default:
		}
		ls.conn.Close()
		ls.log.Info("session ended")
	})
}

// legacyStream serves GET /sse: it is the session.
func (h *Handler) legacyStream(w http.ResponseWriter, r *http.Request) {
	if h.isClosing() {
		unavailable(w)
		return
	}
	if h.sessionsFull(w, r) {
		return
	}
	id := newSessionID()
	ls := &legacySession{id: id, owner: h.ownerOf(r), wake: make(chan struct{}, 1)}
	ls.conn = h.srv.Connect(ls, host.ConnInfo{ID: "sse-" + shortID(id)})
	ls.log = ls.conn.Logger()
	ctx, cancel := context.WithCancel(context.Background())
	ls.cancel = cancel
	conn := ls.conn
	ls.serve = func(r *http.Request, raw []byte) { conn.Handle(callerContext(ctx, r), raw) }
	h.mu.Lock()
	h.legacy[id] = ls
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		if h.legacy[id] == ls {
			delete(h.legacy, id)
		}
		h.mu.Unlock()
		ls.end()
		if h.testHookLegacyEnd != nil {
			h.testHookLegacyEnd()
		}
	}()
	ls.log.Info("session started", "transport", "sse", "remote", r.RemoteAddr)

	startSSE(w)
	rc := http.NewResponseController(w)
	buf := append([]byte("event: endpoint\ndata: "), legacyMessagesPath+"?sessionId="+url.QueryEscape(id)...)
	buf = append(buf, "\n\n"...)
	if _, err := w.Write(buf); err != nil || rc.Flush() != nil {
		return
	}
	var queue [][]byte
	for {
		ls.mu.Lock()
		queue, ls.queue = ls.queue, queue[:0]
		ended := ls.ended
		ls.mu.Unlock()
		for i, msg := range queue {
			buf = append(buf[:0], "event: message\ndata: "...)
			buf = append(buf, msg...)
			buf = append(buf, "\n\n"...)
			if _, err := w.Write(buf); err != nil {
				return
			}
			queue[i] = nil
		}
		if len(queue) > 0 && rc.Flush() != nil {
			return
		}
		if ended {
			return
		}
		select {
		case <-ls.wake:
		case <-r.Context().Done():
			return
		}
	}
}

// legacyPost serves POST /messages?sessionId=…: the message is handed to
// the session and the answer goes out on its stream.
func (h *Handler) legacyPost(w http.ResponseWriter, r *http.Request) {
	if !isJSONContentType(r.Header.Get("Content-Type")) {
		httpError(w, http.StatusUnsupportedMediaType, codeHTTP, "Unsupported Media Type: Content-Type must be application/json")
		return
	}
	sid := r.URL.Query().Get("sessionId")
	if sid == "" {
		httpError(w, http.StatusBadRequest, codeHTTP, "Bad Request: sessionId is required")
		return
	}
	h.mu.Lock()
	ls := h.legacy[sid]
	h.mu.Unlock()
	if ls == nil || !h.owns(ls.owner, r, sid) {
		httpError(w, http.StatusNotFound, codeSessionNotFound, "Session not found")
		return
	}
	body, ok := h.readBody(w, r)
	if !ok {
		return
	}
	m, _ := jsonrpc.Decode(body)
	if !h.oauth.authorize(w, r, h, &m, false) {
		return
	}
	if !h.handOver(m.Kind == jsonrpc.KindResponse, func() { ls.serve(r, body) }) {
		unavailable(w)
		return
	}
	w.WriteHeader(http.StatusAccepted)
	w.Write([]byte("Accepted"))
}
