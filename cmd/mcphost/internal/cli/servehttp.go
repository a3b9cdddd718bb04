package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/mcphost/mcphost/host/auth"
	"github.com/mcphost/mcphost/host/streamable"
	"github.com/mcphost/mcphost/plugins/config"
)

// httpFlags are serve's flags for the HTTP transports.
type httpFlags struct {
	addr, path, tokenEnv string
	hosts, origins       listFlag
	idle, pollAfter      time.Duration
	retry                time.Duration
}

func (f *httpFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.addr, "http", "", "serve Streamable HTTP (and legacy HTTP+SSE) on `host:port` instead of stdio; a bare port binds 127.0.0.1, port 0 picks a free one")
	fs.StringVar(&f.path, "http-path", "/mcp", "the Streamable HTTP endpoint")
	fs.StringVar(&f.tokenEnv, "auth-token-env", "", "require `VAR`'s value as a bearer token on every HTTP request")
	fs.Var(&f.hosts, "allow-host", "also accept this Host header (`host` or host:port; repeatable, comma-separated; loopback names are always accepted)")
	fs.Var(&f.origins, "allow-origin", "also accept this Origin (`scheme://host[:port]`; repeatable, comma-separated; loopback origins are always accepted)")
	fs.DurationVar(&f.idle, "session-idle", 30*time.Minute, "end HTTP sessions idle this long")
	fs.DurationVar(&f.pollAfter, "sse-poll-after", 0, "close the SSE stream of a request still running after this long; 2025-11-25 clients resume with Last-Event-ID (0: never)")
	fs.DurationVar(&f.retry, "sse-retry", time.Second, "reconnection delay sent to SSE clients")
}

// listen opens the listener --http asks for (nil when serving stdio) and
// logs its address as `listening addr=http://HOST:PORT/PATH`, which
// scripts parse.
func (f *httpFlags) listen(log *slog.Logger, oauth bool) (net.Listener, streamable.Options, error) {
	var opts streamable.Options
	if f.addr == "" {
		return nil, opts, nil
	}
	if !strings.HasPrefix(f.path, "/") || f.path == "/sse" || f.path == "/messages" {
		return nil, opts, fmt.Errorf("--http-path %q: must start with / and not be /sse or /messages", f.path)
	}
	addr := f.addr
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	h, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, opts, fmt.Errorf("--http %q: %w", f.addr, err)
	}
	if h == "" {
		h = "127.0.0.1"
	}
	opts = streamable.Options{
		Path:           f.path,
		AllowedHosts:   f.hosts,
		AllowedOrigins: f.origins,
		SessionIdle:    f.idle,
		PollAfter:      f.pollAfter,
		Retry:          f.retry,
	}
	if f.tokenEnv != "" {
		opts.AuthToken = os.Getenv(f.tokenEnv)
		if opts.AuthToken == "" {
			return nil, opts, fmt.Errorf("--auth-token-env %s: the variable is unset or empty", f.tokenEnv)
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(h, port))
	if err != nil {
		return nil, opts, fmt.Errorf("--http: %w", err)
	}
	if ip := net.ParseIP(h); (ip == nil || !ip.IsLoopback()) && h != "localhost" && opts.AuthToken == "" && !oauth {
		log.Warn("serving HTTP beyond loopback without --auth-token-env: anyone who can reach it can call the plugins", "bind", h)
	}
	log.Info("listening", "addr", "http://"+ln.Addr().String()+f.path)
	return ln, opts, nil
}

// oauth returns the token validator of the [auth] table, nil without one
// or over stdio, whose peer is the process that launched mcphost (it gets
// one warning line).
func (f *httpFlags) oauth(ctx context.Context, a *config.Auth, log *slog.Logger) (*auth.Validator, error) {
	switch {
	case a == nil:
		return nil, nil
	case f.addr == "":
		log.Warn("[auth] applies to --http only; serving stdio without it (the peer is the process that started mcphost)")
		return nil, nil
	case f.tokenEnv != "":
		return nil, fmt.Errorf("--auth-token-env and [auth] (line %d) both set: use one way of checking tokens", a.Line)
	}
	return auth.New(ctx, authConfig(a), auth.Options{Logger: log.With("component", "auth")})
}

// authConfig copies the parsed [auth] table into the validator's own
// plain-data form (package auth does not link the configuration parser).
func authConfig(a *config.Auth) auth.Config {
	scopes := make([]auth.ScopeRule, len(a.Scopes))
	for i, r := range a.Scopes {
		scopes[i] = auth.ScopeRule(r)
	}
	return auth.Config{
		Resource:         a.Resource,
		Issuers:          a.Issuers,
		Scopes:           scopes,
		JWKSURL:          a.JWKSURL,
		IntrospectionURL: a.IntrospectionURL,
		ClientIDEnv:      a.ClientIDEnv,
		ClientSecretEnv:  a.ClientSecretEnv,
	}
}

// listFlag is a repeatable, comma-separated string flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}
