package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// TestHTTPHostFuncKeepsInstance: mcphost's http host function answers a
// refusal (allowed_hosts, a person's denial, a consent question still to
// be answered, as in an input_required round) with {"error":…,
// "refused":true}, and a network failure with {"error":…}; the call
// succeeds and the instance, with its count, stays. An allowed request
// answers status, headers and body.
func TestHTTPHostFuncKeepsInstance(t *testing.T) {
	t.Parallel()
	needGuest(t)
	srv, _ := serveOn(t, "127.0.0.1:0", "upstream", nil)
	closed, _ := serveOn(t, "127.0.0.1:0", "closed", nil)
	closed.Close() // a port that refuses connections
	tests := []struct {
		name    string
		lim     Limits
		url     string
		refused bool
		errs    []string // substrings of the error; nil: served
	}{
		{name: "allowed", lim: Limits{AllowedHosts: []string{"127.0.0.1"}}, url: srv.URL + "/x"},
		{name: "allowed_hosts miss", url: srv.URL + "/x", refused: true,
			errs: []string{"host 127.0.0.1 is not allowed", "allowed_hosts"}},
		{name: "consent denied", lim: Limits{MayRequestHosts: []string{"127.0.0.1"}, Consent: &fakeConsent{err: errors.New("a person denied it")}},
			url: srv.URL + "/x", refused: true, errs: []string{"a person denied it"}},
		{name: "consent pending", lim: Limits{MayRequestHosts: []string{"127.0.0.1"}, Consent: &fakeConsent{err: errors.New("input required: the client is asked to answer this request and retry")}},
			url: srv.URL + "/x", refused: true, errs: []string{"input required"}},
		{name: "connection refused", lim: Limits{AllowedHosts: []string{"127.0.0.1"}}, url: closed.URL + "/x",
			errs: []string{"connection refused"}},
		{name: "not a URL", lim: Limits{AllowedHosts: []string{"127.0.0.1"}}, url: "http://[::1", errs: []string{"invalid url"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.lim.Instances = 1
			m := load(t, tc.lim)
			ctx := WithPeer(context.Background(), nopPeer{})
			count := func(want int) {
				t.Helper()
				out, err := m.Call(ctx, "count", nil)
				if err != nil || string(out) != strconv.Itoa(want) {
					t.Fatalf("count: got %q, %v; want %d (the instance kept)", out, err, want)
				}
			}
			count(1)
			payload, _ := json.Marshal(abi.HTTPRequest{URL: tc.url, Headers: map[string]string{"X-Test": "1"}})
			out, err := m.Call(ctx, "host", hostCall(abi.HostHTTP, string(payload)))
			if err != nil {
				t.Fatalf("http: the call failed: %v; want a reply the guest handles", err)
			}
			var rep abi.HTTPReply
			if err := json.Unmarshal(out, &rep); err != nil {
				t.Fatalf("reply %q: %v", out, err)
			}
			if tc.errs == nil {
				if rep.Error != "" || rep.Status != 200 || string(rep.Body) != "hello from upstream" || rep.Headers["content-type"] == "" {
					t.Errorf("got %+v; want 200, a content-type and the upstream's body", rep)
				}
			} else {
				if rep.Refused != tc.refused || rep.Status != 0 || rep.Body != nil {
					t.Errorf("got %+v; want refused=%v and no response", rep, tc.refused)
				}
				for _, want := range tc.errs {
					if !strings.Contains(rep.Error, want) {
						t.Errorf("error %q; want it to contain %q", rep.Error, want)
					}
				}
			}
			count(2)
		})
	}
}
