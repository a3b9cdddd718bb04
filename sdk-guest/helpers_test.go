package guest

import (
	"encoding/json"
	"sync"
	"testing"
)

// useRegistry gives the test an empty registry and a recording host.
func useRegistry(t *testing.T) *fakeHost {
	t.Helper()
	old := std
	std = newRegistry()
	h := &fakeHost{replies: map[string]string{}, config: map[string]string{}}
	restore := SetHostForTesting(h)
	t.Cleanup(func() {
		std = old
		restore()
	})
	return h
}

type hostCall struct {
	name    string
	payload string
}

type fakeHost struct {
	mu      sync.Mutex
	calls   []hostCall
	replies map[string]string // host function → reply JSON
	config  map[string]string
	logs    []string
	http    func(*HTTPRequest) (*HTTPResponse, error)
}

func (h *fakeHost) Call(name string, payload []byte) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, hostCall{name, string(payload)})
	if r, ok := h.replies[name]; ok {
		return []byte(r), nil
	}
	return nil, nil
}

func (h *fakeHost) Config(key string) (string, bool) {
	v, ok := h.config[key]
	return v, ok
}

func (h *fakeHost) HTTP(req *HTTPRequest) (*HTTPResponse, error) {
	if h.http == nil {
		return nil, ErrNoHost
	}
	return h.http(req)
}

func (h *fakeHost) Log(level Level, msg string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.logs = append(h.logs, string(level)+": "+msg)
}

func (h *fakeHost) recorded() []hostCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hostCall(nil), h.calls...)
}

// input builds an export input from a request value.
func input(t *testing.T, req any, ctx string) []byte {
	t.Helper()
	r, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if ctx == "" {
		ctx = "{}"
	}
	return []byte(`{"request":` + string(r) + `,"context":` + ctx + `}`)
}
