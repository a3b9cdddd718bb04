package guest

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/mcphost/mcphost/abi"
)

// HostFuncs is what the SDK needs from the host. Under Wasm it is the
// Extism kernel and mcphost's host functions; elsewhere it is whatever
// [SetHostForTesting] installed (see package guesttest for a ready fake).
type HostFuncs interface {
	// Call invokes the host function name (one of the abi.Host* names)
	// with a JSON payload (nil when there is none) and returns its JSON
	// reply (nil when there is none). A reply {"error":"…"} is turned
	// into an error by the SDK, so Call may return it as is.
	Call(name string, payload []byte) ([]byte, error)
	// Config returns the plugin's configuration value for key.
	Config(key string) (string, bool)
	// HTTP performs an HTTP request through the host.
	HTTP(req *HTTPRequest) (*HTTPResponse, error)
	// Log writes a line to the host's own log (not to the MCP client).
	Log(level Level, msg string)
}

var (
	hostMu  sync.RWMutex
	hostImp HostFuncs = platformHost()
)

func currentHost() HostFuncs {
	hostMu.RLock()
	defer hostMu.RUnlock()
	return hostImp
}

// SetHostForTesting replaces the host the SDK talks to and returns a
// function that restores the previous one. It is meant for native unit
// tests of a plugin's handlers; under Wasm the real host is already there.
func SetHostForTesting(h HostFuncs) (restore func()) {
	hostMu.Lock()
	defer hostMu.Unlock()
	old := hostImp
	hostImp = h
	return func() {
		hostMu.Lock()
		defer hostMu.Unlock()
		hostImp = old
	}
}

// ErrNoHost is returned by host calls when no host is attached (a native
// build without [SetHostForTesting]).
var ErrNoHost = errors.New("no host: not running under wasm and no test host installed")

// HostError is a failure reported by a host function ({"error":"…"}), for
// example because the client does not support sampling.
type HostError struct {
	Func    string // the host function
	Message string
	// Refused is set by [HTTP] when the host refused the destination:
	// the plugin's allowed_hosts does not name it, a person denied it, or
	// a person is still to be asked (2026-07-28: the call then ends in an
	// input_required round and runs again with the answer, so return the
	// error; the instance and its state stay).
	Refused bool
}

func (e *HostError) Error() string { return fmt.Sprintf("host %s: %s", e.Func, e.Message) }

// caller is what calls host functions: a HostFuncs, or one import alone
// (kv.go).
type caller interface {
	Call(name string, payload []byte) ([]byte, error)
}

// callHost sends v (nil for no payload) to the host function name and
// decodes its reply into out (nil to ignore it).
func callHost(name string, v, out any) error {
	return callHostOn(currentHost(), name, v, out)
}

// callHostOn is callHost through h.
func callHostOn(h caller, name string, v, out any) error {
	var payload []byte
	if v != nil {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("host %s: encode: %w", name, err)
		}
		payload = b
	}
	reply, err := h.Call(name, payload)
	if err != nil {
		return fmt.Errorf("host %s: %w", name, err)
	}
	if len(reply) == 0 {
		if out != nil {
			return fmt.Errorf("host %s: empty reply", name)
		}
		return nil
	}
	var he struct {
		Error *string `json:"error"`
	}
	if json.Unmarshal(reply, &he) == nil && he.Error != nil {
		return &HostError{Func: name, Message: *he.Error}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(reply, out); err != nil {
		return fmt.Errorf("host %s: decode reply: %w", name, err)
	}
	return nil
}

// Level is an MCP logging level (RFC 5424 severities).
type Level string

// The MCP logging levels, least to most severe.
const (
	LevelDebug     Level = "debug"
	LevelInfo      Level = "info"
	LevelNotice    Level = "notice"
	LevelWarning   Level = "warning"
	LevelError     Level = "error"
	LevelCritical  Level = "critical"
	LevelAlert     Level = "alert"
	LevelEmergency Level = "emergency"
)

// Log sends msg to the MCP client as a notifications/message at level.
// The host drops it when the client asked for a higher level.
func (c *Context) Log(level Level, msg string) error {
	return c.LogData(level, "", msg)
}

// LogData sends any JSON-encodable data to the MCP client as a
// notifications/message, naming logger (which may be empty).
func (c *Context) LogData(level Level, logger string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("log: encode data: %w", err)
	}
	return callHost(abi.HostLog, abi.LoggingMessageParams{Level: string(level), Logger: logger, Data: b}, nil)
}

// Progress reports progress on the current request (notifications/progress).
// total <= 0 means unknown. It sends nothing when the client did not ask
// for progress (no progress token). Once the client has cancelled the
// call it returns an error wrapping context.Canceled instead, as Sample
// and Elicit do, so a loop that reports progress ends with it.
func (c *Context) Progress(progress, total float64, msg string) error {
	tok := c.ProgressToken()
	if tok == nil {
		return nil
	}
	if c.Err() != nil {
		// A loop that reports progress stops with it once the client
		// cancelled, well within cancel_grace.
		return errCancelled("progress")
	}
	p := abi.ProgressParams{ProgressToken: tok, Progress: progress, Message: msg}
	if total > 0 {
		p.Total = &total
	}
	return callHost(abi.HostProgress, p, nil)
}

// Sample asks the client's model for a completion (sampling/createMessage)
// and waits for it.
func (c *Context) Sample(p abi.CreateMessageParams) (*abi.CreateMessageResult, error) {
	if c.Err() != nil {
		return nil, errCancelled("sample")
	}
	var r abi.CreateMessageResult
	if err := callHost(abi.HostSample, p, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Elicit asks the user for input (elicitation/create) and waits for the
// answer. The result's Action is "accept", "decline" or "cancel".
func (c *Context) Elicit(p abi.ElicitParams) (*abi.ElicitResult, error) {
	if c.Err() != nil {
		return nil, errCancelled("elicit")
	}
	var r abi.ElicitResult
	if err := callHost(abi.HostElicit, p, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Roots asks the client for its roots (roots/list).
func (c *Context) Roots() ([]abi.Root, error) {
	var r abi.ListRootsResult
	if err := callHost(abi.HostListRoots, nil, &r); err != nil {
		return nil, err
	}
	return r.Roots, nil
}

// ResourceUpdated tells subscribed clients that the resource at uri
// changed (notifications/resources/updated).
func (c *Context) ResourceUpdated(uri string) error {
	return callHost(abi.HostResourceUpdated, abi.ResourceUpdatedParams{URI: uri}, nil)
}

// URLElicitationComplete tells the client that the URL-mode elicitation id
// has completed (notifications/elicitation/complete).
func (c *Context) URLElicitationComplete(id string) error {
	return callHost(abi.HostURLElicitComplete, map[string]string{"elicitationId": id}, nil)
}

// NotifyToolListChanged tells the host the tool list changed: mcphost
// re-reads it (from this instance, after the call) and then tells the
// clients. A plugin whose lists change must not import sdk-guest/stateless:
// its lists live in one instance.
func NotifyToolListChanged() error { return callHost(abi.HostToolListChanged, nil, nil) }

// NotifyPromptListChanged tells the client the prompt list changed.
func NotifyPromptListChanged() error { return callHost(abi.HostPromptListChanged, nil, nil) }

// NotifyResourceListChanged tells the client the resource list changed.
func NotifyResourceListChanged() error { return callHost(abi.HostResourceListChanged, nil, nil) }

// Config returns the plugin's configuration value for key (the config
// table of its plugins.toml entry, read through Extism's config_get).
// Environment variables the host passes are plain os.Getenv.
func Config(key string) (string, bool) { return currentHost().Config(key) }

// Logf writes a line to the host's log (Extism log_debug, log_info,
// log_warn or log_error by level). It does not reach the MCP client; use
// [Context.Log] for that.
func Logf(level Level, format string, args ...any) {
	currentHost().Log(level, fmt.Sprintf(format, args...))
}
