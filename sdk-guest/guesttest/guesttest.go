package guesttest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
)

// Host is a fake of everything a plugin can ask of mcphost. The zero value
// answers sampling and elicitation with host errors (as a client without
// those capabilities would), has no roots, no config and no network.
type Host struct {
	ConfigValues map[string]string
	Sample       func(abi.CreateMessageParams) (*abi.CreateMessageResult, error)
	Elicit       func(abi.ElicitParams) (*abi.ElicitResult, error)
	Roots        []abi.Root
	HTTP         func(*guest.HTTPRequest) (*guest.HTTPResponse, error)
	// KVErr, when not "", fails every guest.KV call with it, as a store
	// that is down does.
	KVErr string
	// Cancelled, when set, says whether the client has cancelled the
	// call being served, as mcphost's cancelled host function does: a
	// handler's ctx.Err and ctx.Done ask it. nil never cancels.
	Cancelled func() bool

	mu    sync.Mutex
	calls []Call
	logs  []string
	kv    map[string][]byte // guest.KV's state
}

// Call is one recorded host-function call.
type Call struct {
	Name    string          // an abi.Host* name
	Payload json.RawMessage // nil when there was none
}

// Install makes h the SDK's host until the test ends and returns it; nil
// installs a new zero Host.
func Install(t testing.TB, h *Host) *Host {
	t.Helper()
	if h == nil {
		h = &Host{}
	}
	t.Cleanup(Use(h))
	return h
}

// Use makes h the SDK's host and returns a function that restores the
// previous one: [Install] for code without a testing.TB, such as an
// Example function or TestMain.
func Use(h *Host) (restore func()) { return guest.SetHostForTesting(hostFuncs{h}) }

// Calls returns the recorded calls of host function name ("" for all).
func (h *Host) Calls(name string) []Call {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Call
	for _, c := range h.calls {
		if name == "" || c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// Logs returns the lines written with guest.Logf.
func (h *Host) Logs() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.logs...)
}

// hostFuncs adapts Host to guest.HostFuncs without giving Host methods
// whose names clash with its fields.
type hostFuncs struct{ h *Host }

func (f hostFuncs) Call(name string, payload []byte) ([]byte, error) {
	h := f.h
	h.mu.Lock()
	var p json.RawMessage
	if payload != nil {
		p = append(json.RawMessage(nil), payload...)
	}
	h.calls = append(h.calls, Call{Name: name, Payload: p})
	sample, elicit, roots := h.Sample, h.Elicit, h.Roots
	h.mu.Unlock()

	switch name {
	case abi.HostSample:
		if sample == nil {
			return hostError("sampling is not supported by the test host")
		}
		var req abi.CreateMessageParams
		if err := json.Unmarshal(payload, &req); err != nil {
			return nil, fmt.Errorf("decode %s payload: %w", name, err)
		}
		return reply(sample(req))
	case abi.HostElicit:
		if elicit == nil {
			return hostError("elicitation is not supported by the test host")
		}
		var req abi.ElicitParams
		if err := json.Unmarshal(payload, &req); err != nil {
			return nil, fmt.Errorf("decode %s payload: %w", name, err)
		}
		return reply(elicit(req))
	case abi.HostKV:
		return h.serveKV(payload)
	case abi.HostListRoots:
		if roots == nil {
			roots = []abi.Root{}
		}
		return json.Marshal(abi.ListRootsResult{Roots: roots})
	case abi.HostLog, abi.HostProgress, abi.HostToolListChanged, abi.HostPromptListChanged,
		abi.HostResourceListChanged, abi.HostResourceUpdated, abi.HostURLElicitComplete:
		return nil, nil
	}
	return nil, fmt.Errorf("unknown host function %q", name)
}

// serveKV serves guest.KV from an in-memory map.
func (h *Host) serveKV(payload []byte) ([]byte, error) {
	var req abi.KVRequest
	if err := json.Unmarshal(payload, &req); err != nil {
		return nil, fmt.Errorf("decode kv payload: %w", err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.KVErr != "" {
		return hostError(h.KVErr)
	}
	if h.kv == nil {
		h.kv = map[string][]byte{}
	}
	var rep abi.KVReply
	switch req.Op {
	case abi.KVGet:
		rep.Value, rep.Found = h.kv[req.Key]
	case abi.KVSet:
		h.kv[req.Key] = append([]byte(nil), req.Value...)
	case abi.KVDelete:
		delete(h.kv, req.Key)
	case abi.KVExists:
		_, rep.Found = h.kv[req.Key]
	case abi.KVKeys:
		for k := range h.kv {
			rep.Keys = append(rep.Keys, k)
		}
		slices.Sort(rep.Keys)
	case abi.KVIncrement:
		n, err := strconv.ParseInt(cmp.Or(string(h.kv[req.Key]), "0"), 10, 64)
		if err != nil {
			return hostError("kv increment: the value is not an integer")
		}
		rep.Number = n + req.Delta
		h.kv[req.Key] = []byte(strconv.FormatInt(rep.Number, 10))
	default:
		return hostError("kv: unknown op " + req.Op)
	}
	return json.Marshal(rep)
}

func reply[T any](v *T, err error) ([]byte, error) {
	if err != nil {
		return hostError(err.Error())
	}
	return json.Marshal(v)
}

func hostError(msg string) ([]byte, error) { return json.Marshal(abi.HostError{Error: msg}) }

func (f hostFuncs) Config(key string) (string, bool) {
	f.h.mu.Lock()
	defer f.h.mu.Unlock()
	v, ok := f.h.ConfigValues[key]
	return v, ok
}

func (f hostFuncs) HTTP(req *guest.HTTPRequest) (*guest.HTTPResponse, error) {
	f.h.mu.Lock()
	fn := f.h.HTTP
	f.h.mu.Unlock()
	if fn == nil {
		return nil, fmt.Errorf("HTTP request to %q is not allowed", req.URL)
	}
	return fn(req)
}

// Cancelled answers the SDK's question whether the call is cancelled.
func (f hostFuncs) Cancelled() bool {
	f.h.mu.Lock()
	fn := f.h.Cancelled
	f.h.mu.Unlock()
	return fn != nil && fn()
}

func (f hostFuncs) Log(level guest.Level, msg string) {
	f.h.mu.Lock()
	defer f.h.mu.Unlock()
	f.h.logs = append(f.h.logs, string(level)+": "+msg)
}
