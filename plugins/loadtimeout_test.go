package plugins

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/plugins/config"
)

// TestLoadTimeout: a plugin whose start function loops forever fails
// alone, stopped by its load_timeout (its own or the server's) or, first,
// by its call timeout, with a message naming the key to raise; the plugin
// beside it serves.
func TestLoadTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	hostile := filepath.Join(dir, "hostile.wasm")
	write(t, hostile, string(wasmModule(
		wfunc{name: "list_tools", output: `{"tools":[` + tool("never") + `]}`},
		wfunc{start: true, spin: true},
	)))
	good := filepath.Join(dir, "good.wasm")
	write(t, good, string(wasmModule(wfunc{name: "list_tools", output: `{"tools":[` + tool("now") + `]}`})))
	const short = 300 * time.Millisecond
	for _, tc := range []struct {
		name                   string
		timeout, load, srvLoad time.Duration
		want                   string
		wantLoadTimeout        bool
	}{
		{name: "plugin load_timeout", timeout: time.Hour, load: short, want: "load did not finish within load_timeout (300ms", wantLoadTimeout: true},
		{name: "server load_timeout", timeout: time.Hour, srvLoad: short, want: "load did not finish within load_timeout (300ms", wantLoadTimeout: true},
		{name: "call timeout first", timeout: short, load: time.Hour, want: "start function did not return within the plugin's timeout (300ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := config.DefaultConfig()
			cfg.Server.LoadTimeout = tc.srvLoad
			cfg.Plugins = []config.Spec{
				{Name: "hostile", Path: hostile, Timeout: tc.timeout, LoadTimeout: tc.load},
				{Name: "good", Path: good},
			}
			l := NewLoader(LoaderOptions{Engine: newEngine(t), Logger: discard()})
			g, err := l.Build(ctx, cfg, nil)
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			defer g.Close(ctx)
			if got := toolNames(g); strings.Join(got, ",") != "good_now" {
				t.Errorf("tools: got %q; want [good_now]", got)
			}
			err = g.Failed("hostile")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("hostile: got %v; want an error containing %q", err, tc.want)
			}
			var lte *LoadTimeoutError
			if got := errors.As(err, &lte); got != tc.wantLoadTimeout {
				t.Errorf("hostile: errors.As(*LoadTimeoutError) = %v; want %v (err %v)", got, tc.wantLoadTimeout, err)
			}
		})
	}
}
