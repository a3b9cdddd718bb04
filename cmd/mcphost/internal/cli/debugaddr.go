package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// serveDebug serves net/http/pprof on addr (a loopback host:port; port 0
// picks one) until ctx is done, and logs `debug listening addr=…`. It is
// for soak runs and diagnosis (scripts/soak.sh reads the goroutine count
// from it); the handlers are on their own mux, never on the MCP endpoint.
// The returned wait blocks until the server has stopped.
func serveDebug(ctx context.Context, addr string, log *slog.Logger) (wait func(), err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--debug-addr %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("--debug-addr %q: must be a loopback address (pprof shows the process's memory)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--debug-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() { // ends when ctx is done and the server has shut down
		defer close(done)
		errc := make(chan error, 1)
		go func() { errc <- srv.Serve(ln) }() // ends with Shutdown below
		select {
		case err := <-errc:
			if !errors.Is(err, http.ErrServerClosed) {
				log.Error("debug server failed", "err", err)
			}
			return
		case <-ctx.Done():
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
		<-errc
	}()
	log.Info("debug listening", "addr", "http://"+ln.Addr().String()+"/debug/pprof/")
	return func() { <-done }, nil
}
