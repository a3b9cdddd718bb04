package host

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcphost/mcphost/host/internal/jsonrpc"
)

// startupProgressEvery is how often a request waiting for the initial
// load hears that it is still waiting.
const startupProgressEvery = time.Second

// startupProgress tells the client, with notifications/progress, that req
// is waiting for the initial plugin load: at once, then every
// startupProgressEvery, when the request carries a progressToken and the
// load is not done. stop ends it (and waits for its goroutine) before the
// request is answered.
func (s *session) startupProgress(req *request) (stop func()) {
	select {
	case <-s.srv.reg.Ready():
		return func() {}
	default:
	}
	if progressToken(req.param("_meta")) == nil {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() { // owned by the request; stop ends it
		defer close(done)
		t := time.NewTicker(startupProgressEvery)
		defer t.Stop()
		for n := 0; ; n++ {
			msg := fmt.Sprintf(`{"progress":%d,"message":"waiting for plugins to load"}`, n)
			_ = (*peer)(req).Notify(context.Background(), "notifications/progress", []byte(msg))
			select {
			case <-t.C:
			case <-quit:
				return
			case <-s.srv.reg.Ready():
				return
			}
		}
	}()
	return func() { close(quit); <-done }
}

// metaLoading is the _meta key of a list answered while plugins were
// still loading: {"plugins": [...], "message": "..."}.
const metaLoading = "mcphost/loading"

// partialMessage is what a client hears when a list is answered before
// the initial load is done.
const partialMessage = "plugins are still loading (a first start builds and compiles them): this list lacks theirs; " +
	"notifications/list_changed follows when they load, or list again later"

// partialList tells the client that body, a list answered before the
// initial load was done, may lack plugins still loading, in two ways: a
// warning (notifications/message, sent before the answer on the request's
// own stream, unless the client asked for errors only) and the answer's
// _meta (metaLoading). A client that
// ignores list_changed learns from either that an empty list is not the
// final word. It returns body with the _meta.
func (s *session) partialList(req *request, body []byte) []byte {
	var loading []string
	if s.srv.opts.Loading != nil {
		loading = s.srv.opts.Loading()
	}
	if loading == nil {
		loading = []string{}
	}
	note, err := json.Marshal(struct {
		Message string   `json:"message"`
		Plugins []string `json:"plugins"`
	}{partialMessage, loading})
	if err != nil {
		return body
	}
	// A session that set no level hears it (this is the one warning it
	// must not miss); a stateless request only when its _meta set a level.
	if (req.state == nil && s.level.Load() == 0) || req.admits("warning") {
		params, _ := json.Marshal(struct {
			Level  string          `json:"level"`
			Logger string          `json:"logger"`
			Data   json.RawMessage `json:"data"`
		}{"warning", "mcphost", note})
		s.notify("notifications/message", params, req.id)
	}
	return jsonrpc.SetMember(body, "_meta", jsonrpc.SetMember(jsonrpc.Member(body, "_meta"), metaLoading, note))
}
