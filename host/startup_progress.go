package host

import (
	"context"
	"fmt"
	"time"
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
