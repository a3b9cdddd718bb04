package wasip2

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	"github.com/mcphost/mcphost/sandbox/internal/component"
)

// testInstance is an instance of an empty component whose host may hold
// hostBytes for it, with state as its State.
func testInstance(t *testing.T, hostBytes int64, state any) *component.Instance {
	t.Helper()
	ctx := context.Background()
	c, err := component.Decode([]byte("\x00asm\x0d\x00\x01\x00"))
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	t.Cleanup(func() { rt.Close(ctx) })
	cp, err := component.Compile(ctx, rt, c, Host(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cp.Limits.HostBytes = hostBytes
	inst, err := cp.Instantiate(ctx, state)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Close(ctx) })
	return inst
}

// catch runs f and returns what it panicked with.
func catch(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}

// TestFieldsHostMemory charges wasi:http's fields to their instance: past
// the limit an add fails (panics with a plain *HostMemoryError, which
// fails the guest's call) and holds nothing; dropping what was held gives
// it back.
func TestFieldsHostMemory(t *testing.T) {
	inst := testInstance(t, 1<<20, &State{})
	hc := &component.HostCall{Ctx: context.Background(), Inst: inst}
	f := newFields(hc)
	value := strings.Repeat("v", 100<<10)
	for range 10 {
		f.add("x-hoard", value)
	}
	r := catch(func() { f.add("x-hoard", value) })
	e, isMem := r.(*component.HostMemoryError)
	if !isMem || e.Limit != 1<<20 || !strings.Contains(e.Error(), "memory limit of 1048576 bytes") {
		t.Fatalf("the 11th value of 100 KiB under a limit of 1 MiB: %v", r)
	}
	if len(f.list) != 10 || inst.HostBytes() != 10*entryBytes([2]string{"x-hoard", value}) {
		t.Errorf("after the refusal: %d fields holding %d bytes", len(f.list), inst.HostBytes())
	}
	if r := catch(func() { f.clone(hc) }); r == nil {
		t.Error("a clone of 1 MiB of fields fit beside them under a limit of 1 MiB")
	}
	f.Drop()
	if inst.HostBytes() != 0 {
		t.Errorf("dropped fields still hold %d bytes", inst.HostBytes())
	}
	g := f.clone(hc)
	g.add("x-again", value)
	if inst.HostBytes() == 0 {
		t.Error("fields built after a drop are not charged")
	}
	g.Drop()
	if inst.HostBytes() != 0 {
		t.Errorf("a dropped clone still holds %d bytes", inst.HostBytes())
	}
}

// TestCheckField: header names must be HTTP tokens and values free of
// CR, LF and NUL; the headers of the connection and the destination are
// the host's.
func TestCheckField(t *testing.T) {
	for _, tt := range []struct {
		name, value, want string
	}{
		{"content-type", "text/plain", ""},
		{"X-Custom_1", "a b\tc", ""},
		{"", "v", "invalid-syntax"},
		{"bad name", "v", "invalid-syntax"},
		{"bad:name", "v", "invalid-syntax"},
		{"é", "v", "invalid-syntax"},
		{"x-split", "a\r\nInjected: 1", "invalid-syntax"},
		{"x-nul", "a\x00", "invalid-syntax"},
		{"Host", "elsewhere.example", "forbidden"},
		{"Transfer-Encoding", "chunked", "forbidden"},
		{"connection", "close", "forbidden"},
		{"Proxy-Authorization", "Basic x", "forbidden"},
	} {
		if got := checkField(tt.name, []byte(tt.value)); got != tt.want {
			t.Errorf("checkField(%q, %q) = %q, want %q", tt.name, tt.value, got, tt.want)
		}
	}
}

// httpErrorCode is the cases of wasi:http's error-code that send names.
var httpErrorCode = &component.Type{Kind: component.Variant, Fields: []component.Field{
	{Name: "DNS-timeout"}, {Name: "connection-refused"}, {Name: "connection-reset"}, {Name: "connection-timeout"},
	{Name: "connection-read-timeout"}, {Name: "HTTP-request-denied"}, {Name: "HTTP-request-URI-invalid"},
	{Name: "HTTP-response-timeout"}, {Name: "HTTP-response-body-size", Type: &component.Type{Kind: component.Option, Elem: u64}},
	{Name: "internal-error", Type: &component.Type{Kind: component.Option, Elem: str}},
}}

// TestSend sends wasi:http requests to a loopback server: a response
// arrives with its headers lower-cased; a destination the authority does
// not name alone, a header only the host may set, the sandbox's refusal,
// a body over the limit, a closed port and a request-options timeout each
// give their error-code.
func TestSend(t *testing.T) {
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Write(bytes.Repeat([]byte("x"), 2048))
		case "/hang":
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		default:
			w.Header().Set("X-Echo", r.Header.Get("X-In"))
			w.WriteHeader(http.StatusTeapot)
			w.Write([]byte("body"))
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(hang) })
	authority := strings.TrimPrefix(srv.URL, "http://")
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()

	refused := errors.New("refused by the sandbox")
	state := &State{HTTP: srv.Client(), MaxHTTPBytes: 1024, Refused: func(err error) bool { return errors.Is(err, refused) }}
	inst := testInstance(t, 1<<20, state)
	hc := &component.HostCall{Ctx: context.Background(), Inst: inst}
	request := func(authority, path string, headers ...[2]string) *outgoingRequest {
		h := newFields(hc)
		for _, kv := range headers {
			h.add(kv[0], kv[1])
		}
		return &outgoingRequest{scheme: "http", authority: authority, path: path, headers: h}
	}
	firstByte := &requestOptions{}
	firstByte.timeouts[firstByteTimeout] = component.Case{Index: 1, Val: uint64(20 * time.Millisecond)}

	req := request(authority, "/", [2]string{"X-In", "hi"})
	resp, code := send(hc, req, nil, httpErrorCode)
	req.Drop()
	if code != nil {
		t.Fatalf("send: %v", code)
	}
	if resp.status != http.StatusTeapot || string(resp.body) != "body" ||
		!slices.Contains(resp.headers.list, [2]string{"x-echo", "hi"}) {
		t.Errorf("response: %d %q %v", resp.status, resp.body, resp.headers.list)
	}
	resp.Drop()

	for _, tt := range []struct {
		name string
		req  *outgoingRequest
		opts *requestOptions
		http HTTPDoer
		want string
	}{
		{"user information", request("user@"+authority, "/"), nil, nil, "HTTP-request-URI-invalid"},
		{"a path that moves the host", request(authority, "x"), nil, nil, "HTTP-request-URI-invalid"},
		{"no authority", request("", "/"), nil, nil, "HTTP-request-URI-invalid"},
		{"a host-only header passed on", request(authority, "/", [2]string{"Host", "elsewhere"}), nil, nil, "HTTP-request-denied"},
		{"the sandbox's refusal", request(authority, "/"), nil, refusingDoer{refused}, "HTTP-request-denied"},
		{"a body over the limit", request(authority, "/big"), nil, nil, "HTTP-response-body-size"},
		{"a closed port", request(closedAddr, "/"), nil, nil, "connection-refused"},
		{"no first byte in time", request(authority, "/hang"), firstByte, nil, "HTTP-response-timeout"},
	} {
		state.HTTP = cmp.Or[HTTPDoer](tt.http, srv.Client())
		_, code := send(hc, tt.req, tt.opts, httpErrorCode)
		c, isCase := code.(component.Case)
		if !isCase || httpErrorCode.Fields[c.Index].Name != tt.want {
			t.Errorf("%s: %v, want %s", tt.name, code, tt.want)
			continue
		}
		if tt.want == "HTTP-response-body-size" && c.Val != (component.Case{Index: 1, Val: uint64(1024)}) {
			t.Errorf("%s: %v, want the limit 1024", tt.name, c.Val)
		}
		tt.req.Drop()
	}
	if inst.HostBytes() != 0 {
		t.Errorf("after every request was dropped, %d bytes are held", inst.HostBytes())
	}
}

// refusingDoer fails every request as the sandbox's egress check does.
type refusingDoer struct{ err error }

func (d refusingDoer) Do(*http.Request) (*http.Response, error) { return nil, d.err }
