package systest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Upstream is a loopback HTTP server that counts what reaches it: the
// host a plugin asks a person about.
type Upstream struct {
	URL  string
	Port string
	Hits atomic.Int32
}

func NewUpstream(t *testing.T) *Upstream {
	t.Helper()
	u := &Upstream{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.Hits.Add(1)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "hello from upstream")
	}))
	t.Cleanup(srv.Close)
	pu, _ := url.Parse(srv.URL)
	u.URL, u.Port = srv.URL, pu.Port()
	return u
}

// Person answers mcphost's questions, one scripted answer per question
// ("" blocks until the question is withdrawn), and keeps every message.
type Person struct {
	// withdrawn is closed when the server withdraws an unanswered
	// question (notifications/cancelled cancels the handler's ctx).
	Withdrawn chan struct{}
	Mu        sync.Mutex
	answers   []string
	messages  []string
}

func (p *Person) Say(answers ...string) {
	p.Mu.Lock()
	p.answers = append(p.answers, answers...)
	p.Mu.Unlock()
}

func (p *Person) Asked() []string {
	p.Mu.Lock()
	defer p.Mu.Unlock()
	return append([]string(nil), p.messages...)
}

func (p *Person) Handle(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	p.Mu.Lock()
	p.messages = append(p.messages, r.Params.Message)
	answer := "deny"
	if len(p.answers) > 0 {
		answer, p.answers = p.answers[0], p.answers[1:]
	}
	p.Mu.Unlock()
	switch answer {
	case "":
		<-ctx.Done() // no one answers, until the server withdraws the question
		close(p.Withdrawn)
		return nil, ctx.Err()
	case "decline":
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"decision": answer}}, nil
}
