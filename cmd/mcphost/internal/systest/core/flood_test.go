package core

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFloodingGuest: examples/faulty's flood tool sends 5,000 log messages
// in one call. The client gets a bounded share of them and one closing
// warning that counts the rest.
func TestFloodingGuest(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs real plugins")
	}
	var got atomic.Int64
	closing := make(chan string, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "flood", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			data := fmt.Sprint(r.Params.Data)
			switch {
			case r.Params.Logger == "mcphost" && strings.Contains(data, "sent messages faster than"):
				select {
				case closing <- data:
				default:
					t.Errorf("a second closing message: %s", data)
				}
			case strings.HasPrefix(data, "flood "):
				got.Add(1)
			}
		},
	})
	s := systest.StartServer(t, client, "--config", "testdata/e2e/plugins.toml", "--no-watch")
	ctx := context.Background()
	if err := s.Session.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatal(err)
	}
	const sent = 5000
	start := time.Now()
	res, err := s.Session.CallTool(ctx, &mcp.CallToolParams{Name: "faulty_flood", Arguments: map[string]any{"count": sent}})
	if err != nil || res.IsError || systest.TextOf(t, res) != fmt.Sprintf("sent %d", sent) {
		t.Fatalf("faulty_flood = %+v, %v; want sent %d", res, err, sent)
	}
	elapsed := time.Since(start)
	var msg string
	select {
	case msg = <-closing:
	case <-time.After(time.Minute):
		t.Fatal("no closing message within a minute")
	}
	// Notifications arrive in order, so every forwarded one is counted by
	// the time the closing one is.
	n := got.Load()
	if limit := int64(100 + 50*elapsed.Seconds() + 1); n > limit || n < 100 {
		t.Errorf("%d log messages reached the client in %v; want between the burst (100) and %d", n, elapsed, limit)
	}
	if want := fmt.Sprintf("; %d dropped", sent-n); !strings.HasSuffix(msg, want) || !strings.Contains(msg, `plugin "faulty"`) {
		t.Errorf("closing message %q; want it to name the plugin and end %q", msg, want)
	}
}
