package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sandbox"
)

// TestFloodLimit: a plugin that sends 5,000 log messages and progress
// notifications in one call gets a burst through, then the rate; one
// closing message counts the rest. The plugin's own bucket bounds its
// calls together.
func TestFloodLimit(t *testing.T) {
	const sent = 5000
	mod := fake{tools: []string{tool("flood")}, exports: map[string]func(context.Context, []byte) ([]byte, error){
		abi.ExportCallTool: func(ctx context.Context, _ []byte) ([]byte, error) {
			peer := sandbox.PeerFrom(ctx)
			for i := range sent {
				method := "notifications/message"
				if i%2 == 1 {
					method = "notifications/progress"
				}
				_ = peer.Notify(ctx, method, json.RawMessage(`{"level":"info","data":"x"}`))
			}
			return []byte(`{"content":[]}`), nil
		},
	}}.module()
	g := build(t, NewLoader(LoaderOptions{Logger: discard()}), nil, native("f", mod))
	defer g.Close(context.Background())
	tl := g.Tool("f_flood")

	start := time.Now()
	var peers []*clientPeer
	for range 8 {
		p := &clientPeer{}
		if _, err := tl.Run(context.Background(), p, nil, abi.Context{}); err != nil {
			t.Fatal(err)
		}
		peers = append(peers, p)
	}
	elapsed := time.Since(start).Seconds()

	total := 0
	for i, p := range peers {
		n := len(p.params) - 1 // the closing message
		total += n
		last := p.params[len(p.params)-1]
		if max := callBurst + int(callRate*elapsed) + 1; n > max {
			t.Errorf("call %d: %d messages reached the client; want at most %d", i, n, max)
		}
		want := fmt.Sprintf(`; %d dropped"`, sent-n)
		if !strings.HasPrefix(last, `notifications/message {"level":"warning","logger":"mcphost","data":"plugin \"f\" sent messages faster than`) ||
			!strings.HasSuffix(last, want+"}") {
			t.Errorf("call %d: last message %s; want the closing warning ending %s", i, last, want)
		}
	}
	if max := pluginBurst + int(pluginRate*elapsed) + 1; total > max {
		t.Errorf("%d messages in all; want at most %d (the plugin's bucket)", total, max)
	}
	if total < callBurst {
		t.Errorf("%d messages in all; want at least a call's burst (%d)", total, callBurst)
	}
}
