package lifecycle

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// counterConfig writes a plugins.toml serving testdata/counter (a plugin
// that keeps a count in its instance) from its sources, so that serve
// starts it on the interpreter and compiles it in the background.
func counterConfig(t *testing.T) string {
	t.Helper()
	return counterConfigWith(t, "")
}

// counterConfigWith is counterConfig with more keys (TOML lines) in the
// plugin's table.
func counterConfigWith(t *testing.T, keys string) string {
	t.Helper()
	src, err := filepath.Abs(filepath.Join("testdata", "counter"))
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(t.TempDir(), "plugins.toml")
	body := fmt.Sprintf("[server]\nstartup_wait = \"180s\"\n\n[[plugin]]\nname = \"counter\"\nsource = %s\ntool_prefix = \"\"\ntimeout = \"30s\"\n%s", systest.Quote(src), keys)
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf
}

// counterServer is mcphost serve on a counter config with a client of
// the official Go SDK connected, its stderr watched.
type counterServer struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	log   *logWatch
	cs    *mcp.ClientSession
	http  bool
}

// serveCounter starts serve --config conf --no-watch, over transport
// ("stdio" or "http") and with XDG_CACHE_HOME at cache, connects client
// in the protocol version given and lists the tools, which waits for the
// plugin's build and load. ctx bounds the process.
func serveCounter(ctx context.Context, t *testing.T, client *mcp.Client, conf, transport, version, cache string) *counterServer {
	t.Helper()
	args := []string{"serve", "--config", conf, "--no-watch"}
	if transport == "http" {
		args = append(args, "--http", "127.0.0.1:0")
	}
	cmd := exec.CommandContext(ctx, systest.Binary(t), args...)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	stdin, stdout, log := startPiped(t, cmd)
	s := &counterServer{cmd: cmd, stdin: stdin, log: log, http: transport == "http"}
	var conn mcp.Transport = &mcp.IOTransport{Reader: stdout, Writer: stdin}
	if s.http {
		line, err := log.wait(ctx, "msg=listening addr=http://")
		if err != nil {
			t.Fatal(err)
		}
		url, _, _ := strings.Cut(line[strings.Index(line, "addr=")+len("addr="):], " ")
		conn = &mcp.StreamableClientTransport{Endpoint: url}
	}
	cs, err := client.Connect(ctx, conn, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	s.cs = cs
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	return s
}

// count calls tool and fails unless it answers want, the count.
func (s *counterServer) count(ctx context.Context, t *testing.T, tool string, want int, when string) {
	t.Helper()
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool})
	if err != nil || res.IsError || systest.TextOf(t, res) != fmt.Sprint(want) {
		t.Fatalf("%s %s: got %v, %+v (%q); want the count %d\nstderr:\n%s", tool, when, err, res, textOfOrNil(t, res), want, s.log)
	}
}

// stop closes the session, ends the server (over stdio the closed
// session ends it; over HTTP, SIGTERM) and fails unless it exits cleanly.
func (s *counterServer) stop(t *testing.T) {
	t.Helper()
	if err := s.cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if s.http {
		s.cmd.Process.Signal(syscall.SIGTERM)
		s.stdin.Close()
	}
	<-s.log.closed
	if err := s.cmd.Wait(); err != nil {
		t.Errorf("mcphost exited with %v\nstderr:\n%s", err, s.log)
	}
}

func textOfOrNil(t *testing.T, res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	return systest.TextOf(t, res)
}
