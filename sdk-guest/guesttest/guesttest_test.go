package guesttest_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
	"github.com/mcphost/mcphost/sdk-guest/guesttest"
)

func init() {
	guest.AddTool(guest.Tool{Name: "guesttest_probe", Description: "Uses every host feature."},
		func(ctx *guest.Context, _ struct{}) (*guest.Result, error) {
			var parts []string
			if err := ctx.Log(guest.LevelInfo, "probing"); err != nil {
				return nil, err
			}
			if r, err := ctx.Sample(abi.CreateMessageParams{MaxTokens: 1}); err != nil {
				parts = append(parts, "sample error: "+err.Error())
			} else {
				parts = append(parts, "sample: "+r.Content.Text)
			}
			if r, err := ctx.Elicit(abi.ElicitParams{Message: "m"}); err != nil {
				parts = append(parts, "elicit error: "+err.Error())
			} else {
				parts = append(parts, "elicit: "+r.Action)
			}
			roots, err := ctx.Roots()
			parts = append(parts, "roots: "+strings.Repeat("r", len(roots)), "roots error: "+errString(err))
			v, _ := guest.Config("k")
			parts = append(parts, "config: "+v)
			if _, err := guest.HTTP(&guest.HTTPRequest{URL: "https://example.com/"}); err != nil {
				parts = append(parts, "http error: "+err.Error())
			}
			guest.Logf(guest.LevelDebug, "done")
			return guest.TextResult(strings.Join(parts, "\n")), nil
		})
}

func errString(err error) string {
	if err == nil {
		return "none"
	}
	return err.Error()
}

func TestZeroHost(t *testing.T) {
	h := guesttest.Install(t, nil)
	res := guesttest.CallTool(t, "guesttest_probe", nil)
	want := strings.Join([]string{
		"sample error: host create_message: sampling is not supported by the test host",
		"elicit error: host create_elicitation: elicitation is not supported by the test host",
		"roots: ", "roots error: none", "config: ",
		`http error: http: HTTP request to "https://example.com/" is not allowed`,
	}, "\n")
	if got := res.Content[0].Text; got != want {
		t.Errorf("probe with a zero host:\ngot  %s\nwant %s", got, want)
	}
	if calls := h.Calls(""); len(calls) != 4 || calls[0].Name != abi.HostLog || string(calls[0].Payload) != `{"level":"info","data":"probing"}` {
		t.Errorf("calls = %+v; want log, sample, elicit, roots", calls)
	}
	if calls := h.Calls(abi.HostListRoots); len(calls) != 1 || calls[0].Payload != nil {
		t.Errorf("list_roots calls = %+v; want one without payload", calls)
	}
	if logs := h.Logs(); len(logs) != 1 || logs[0] != "debug: done" {
		t.Errorf("logs = %v; want [debug: done]", logs)
	}
}

func TestConfiguredHost(t *testing.T) {
	guesttest.Install(t, &guesttest.Host{
		ConfigValues: map[string]string{"k": "v"},
		Sample: func(p abi.CreateMessageParams) (*abi.CreateMessageResult, error) {
			return &abi.CreateMessageResult{Role: "assistant", Content: guest.Text("answer"), Model: "m"}, nil
		},
		Elicit: func(abi.ElicitParams) (*abi.ElicitResult, error) { return nil, errors.New("user went away") },
		Roots:  []abi.Root{{URI: "file:///a"}, {URI: "file:///b"}},
		HTTP: func(*guest.HTTPRequest) (*guest.HTTPResponse, error) {
			return &guest.HTTPResponse{Status: 200}, nil
		},
	})
	res := guesttest.CallTool(t, "guesttest_probe", nil)
	want := "sample: answer\nelicit error: host create_elicitation: user went away\nroots: rr\nroots error: none\nconfig: v"
	if got := res.Content[0].Text; got != want {
		t.Errorf("probe with a configured host:\ngot  %s\nwant %s", got, want)
	}
}

func TestInput(t *testing.T) {
	got := string(guesttest.Input(t, map[string]string{"uri": "x://"}, abi.Context{ID: json.RawMessage("7")}))
	if want := `{"request":{"uri":"x://"},"context":{"id":7}}`; got != want {
		t.Errorf("Input = %s; want %s", got, want)
	}
	if got := string(guesttest.Input(t, nil, abi.Context{})); got != `{"context":{}}` {
		t.Errorf("Input(nil) = %s; want {\"context\":{}}", got)
	}
}
