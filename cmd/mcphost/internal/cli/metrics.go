package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/mcphost/mcphost/host/metrics"
)

// serveMetrics serves m at http://addr/metrics on a listener of its own
// (never the MCP one: metrics need no MCP auth, and MCP clients need no
// metrics) and logs `metrics listening addr=…`, which tests parse. stop
// ends the server and waits for its goroutine.
func serveMetrics(ctx context.Context, addr string, m *metrics.Metrics, log *slog.Logger) (stop func(), err error) {
	if !strings.Contains(addr, ":") {
		addr = "127.0.0.1:" + addr
	} else if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	hs := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", "err", err)
		}
	}()
	if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() {
		log.Warn("serving metrics beyond loopback: anyone who can reach it can read them (plugin and tool names, load)", "addr", ln.Addr().String())
	}
	log.Info("metrics listening", "addr", "http://"+ln.Addr().String()+"/metrics")
	return func() {
		hs.Close()
		<-done
	}, nil
}
