package host

import (
	"encoding/json"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/hosttest"
	"github.com/mcphost/mcphost/host/internal/jsonrpc"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
)

// The shared fixture (package hosttest), under the names these tests have
// always used.

type fixture = hosttest.Fixture

type native = hosttest.Native

const mediaResult = hosttest.MediaResult

var quietLog = hosttest.QuietLog

func newFixture() *fixture { return hosttest.NewFixture() }

func echoExports() map[string]native { return hosttest.EchoExports() }

func loadRegistry(t testing.TB, fx *fixture, set string) *plugins.Registry {
	t.Helper()
	return hosttest.LoadRegistry(t, fx, set)
}

func input(in []byte) (json.RawMessage, abi.Context) { return hosttest.Input(in) }

func buildGeneration(t *testing.T, specs ...config.Spec) *plugins.Generation {
	t.Helper()
	return hosttest.BuildGeneration(t, specs...)
}

func text(s string) []byte { return hosttest.Text(s) }

// withParams gives req the params (a JSON value, or "" for none) and their
// members as the codec reads them from a message; ok is false when no
// message could carry them (they are not JSON).
func withParams(req *request, params []byte) (_ *request, ok bool) {
	line := []byte(`{"jsonrpc":"2.0","id":0,"method":"m"}`)
	if len(params) > 0 {
		line = append(append([]byte(`{"jsonrpc":"2.0","id":0,"method":"m","params":`), params...), '}')
	}
	msg, err := jsonrpc.Decode(line)
	if err != nil {
		return req, false
	}
	req.params, req.members = msg.Params, msg.ParamMembers
	return req, true
}
