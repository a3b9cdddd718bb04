package host

import (
	"encoding/json"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/host/internal/hosttest"
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
