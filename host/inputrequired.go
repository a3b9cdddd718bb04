package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/abi/jsonscan"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/host/internal/reqstate"
	"github.com/mcphost/mcphost/plugins/consent"
)

// Multi round-trip requests (2026-07-28, "input_required"). A stateless
// request cannot wait for the client to answer a server→client request, so
// a plugin that asks for sampling, elicitation or roots while serving
// tools/call, prompts/get or resources/read is re-run instead:
//
//  1. The plugin's requests are numbered by key (the key the guest named in
//     params._meta["io.mcphost/inputKey"], or the method's short name with
//     a counter). A key the client has answered is answered at once from
//     the responses; any other is recorded and the guest gets an error.
//  2. When the plugin returns with requests recorded, its result is
//     replaced by an InputRequiredResult: the recorded requests as
//     inputRequests, and a requestState carrying every response known so
//     far, signed with HMAC-SHA256 (Options.RequestStateKey) and bound to
//     the method and item, with an expiry (host/internal/reqstate).
//  3. The client retries with inputResponses and the requestState; the
//     plugin runs again with all the responses, and either completes or
//     asks for more (another round).
//
// Plugins therefore see the same host functions in both eras; a plugin
// with side effects before its first request repeats them on each round,
// which RATIONALE.md ("Why re-run plugins for `input_required` and for a
// task's input?") weighs.

// inputKeyMeta is the _meta key a guest names an input request with.
const inputKeyMeta = abi.MetaInputKey

// errInputPending is what a plugin's request for input gets while the
// client has not answered it yet: the request ends with input_required.
var errInputPending = errors.New("input required: the client is asked to answer this request and retry")

// inputRound is the input state of one stateless request.
type inputRound struct {
	target string // method and item the state is bound to

	mu        sync.Mutex
	missing   map[string]bool            // capabilities the plugin needed and the client lacks
	responses map[string]json.RawMessage // known answers, by key
	asked     map[string]json.RawMessage // requests to send, by key
	counts    map[string]int             // default keys handed out, by method
	consent   []string                   // consent questions the previous round asked
}

// inputTarget names what a request is about: its method and item.
func inputTarget(req *request) string {
	item, _ := jsonrpc.Unquote(req.param("name"))
	if req.method == "resources/read" {
		item, _ = jsonrpc.Unquote(req.param("uri"))
	}
	return req.method + " " + item
}

// newInputRound reads inputResponses and requestState. Responses that are
// not objects, and state that fails verification, expired or belongs to
// another request, are -32602.
func (srv *Server) newInputRound(req *request) (*inputRound, error) {
	in := &inputRound{
		target:    inputTarget(req),
		responses: map[string]json.RawMessage{},
		asked:     map[string]json.RawMessage{},
		counts:    map[string]int{},
		missing:   map[string]bool{},
	}
	if raw := req.param("requestState"); raw != nil {
		s, ok := jsonrpc.Unquote(raw)
		if !ok {
			return nil, jsonrpc.InvalidParams("invalid params: requestState must be a string")
		}
		body, err := srv.state.Open(s)
		if err != nil {
			return nil, jsonrpc.InvalidParams("invalid params: requestState: %v", err)
		}
		if body.Target != in.target {
			return nil, jsonrpc.InvalidParams("invalid params: requestState belongs to another request")
		}
		for k, v := range body.Responses {
			in.responses[k] = v
		}
		in.consent = body.Consent
	}
	raw := req.param("inputResponses")
	if raw == nil || string(raw) == "null" {
		return in, nil
	}
	if !jsonrpc.IsObject(raw) {
		return nil, jsonrpc.InvalidParams("invalid params: inputResponses must be an object")
	}
	var bad error
	jsonrpc.EachMember(raw, func(k, v []byte) bool {
		key, _ := jsonrpc.Unquote(append(append([]byte{'"'}, k...), '"'))
		if !jsonrpc.IsObject(v) {
			bad = jsonrpc.InvalidParams("invalid params: inputResponses[%q] must be an object (the client's result)", key)
			return false
		}
		if consent.IsKey(key) && !slices.Contains(in.consent, key) {
			return true // never asked: the question goes out when the plugin reaches for it
		}
		in.responses[key] = append(json.RawMessage(nil), v...)
		return true
	})
	if bad != nil {
		return nil, bad
	}
	return in, nil
}

// ask answers a plugin's request from the known responses, or records it
// and returns errInputPending.
func (in *inputRound) ask(method string, params json.RawMessage) (json.RawMessage, error) {
	key, params := inputKey(params)
	in.mu.Lock()
	defer in.mu.Unlock()
	if key == "" {
		short := map[string]string{"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots"}[method]
		in.counts[method]++
		key = short
		if n := in.counts[method]; n > 1 {
			key += "-" + strconv.Itoa(n)
		}
	}
	if r, ok := in.responses[key]; ok {
		return r, nil
	}
	if params == nil {
		params = emptyJSON
	}
	b := append([]byte(`{"method":`), jsonscan.AppendString(nil, method)...)
	b = append(b, `,"params":`...)
	b = append(b, params...)
	in.asked[key] = append(b, '}')
	return nil, fmt.Errorf("%s (%s): %w", method, key, errInputPending)
}

// refused records that a request failed for want of a client capability.
func (in *inputRound) refused(method string) {
	capability := map[string]string{"sampling/createMessage": "sampling", "elicitation/create": "elicitation", "roots/list": "roots"}[method]
	if capability == "" {
		return
	}
	in.mu.Lock()
	in.missing[capability] = true
	in.mu.Unlock()
}

// missingCapability is the -32021 error of a request whose plugin failed
// after asking for something the client did not declare, and asked for
// nothing it could answer: processing it required that capability. A
// plugin that copes without (returns a result that is not an error) is
// not affected.
func (in *inputRound) missingCapability(res any, err error) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.missing) == 0 || len(in.asked) > 0 {
		return nil
	}
	if raw, ok := res.(json.RawMessage); err == nil && (!ok || string(jsonrpc.Member(raw, "isError")) != "true") {
		return nil
	}
	caps := map[string]struct{}{}
	names := ""
	for c := range in.missing {
		caps[c] = struct{}{}
		if names != "" {
			names += ", "
		}
		names += c
	}
	return &jsonrpc.Error{Code: codeMissingCapability, Message: "Missing required client capability: " + names,
		Data: map[string]any{"requiredCapabilities": caps}}
}

// inputKey takes the guest's key out of params._meta.
func inputKey(params json.RawMessage) (string, json.RawMessage) {
	meta := jsonrpc.Member(params, "_meta")
	key, ok := jsonrpc.Unquote(jsonrpc.Member(meta, inputKeyMeta))
	if !ok {
		return "", params
	}
	rest := jsonrpc.RewriteObject(nil, meta, func(dst, k, v []byte) ([]byte, bool) {
		if jsonrpc.KeyIs(k, inputKeyMeta) {
			return dst, false
		}
		return append(dst, v...), true
	})
	params = jsonrpc.RewriteObject(nil, params, func(dst, k, v []byte) ([]byte, bool) {
		if jsonrpc.KeyIs(k, "_meta") {
			if string(rest) == "{}" {
				return dst, false
			}
			return append(dst, rest...), true
		}
		return append(dst, v...), true
	})
	return key, params
}

// inputRequired is the InputRequiredResult of a round that asked for input.
func (srv *Server) inputRequired(req *request) json.RawMessage {
	in := req.input
	in.mu.Lock()
	defer in.mu.Unlock()
	asked, err := json.Marshal(in.asked)
	if err != nil {
		asked = emptyJSON
	}
	var questions []string
	for k := range in.asked {
		if consent.IsKey(k) {
			questions = append(questions, k)
		}
	}
	slices.Sort(questions)
	state := srv.state.Seal(reqstate.Body{Target: in.target, Expires: time.Now().Add(reqstate.Lifetime).Unix(), Responses: in.responses, Consent: questions})
	b := append([]byte(`{"resultType":"input_required","inputRequests":`), asked...)
	b = append(b, `,"requestState":`...)
	b = jsonscan.AppendString(b, state)
	return append(b, '}')
}

// statelessError maps an error to its 2026-07-28 code: an unknown resource
// is -32602 there (it was -32002).
func (srv *Server) statelessError(err error) error {
	var re *jsonrpc.Error
	if errors.As(err, &re) && re.Code == codeResourceNotFound {
		c := *re
		c.Code = jsonrpc.CodeInvalidParams
		return &c
	}
	return err
}
