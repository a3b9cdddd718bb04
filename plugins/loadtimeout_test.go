package plugins

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/sandbox"
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
				{Name: "good", Path: good, LoadTimeout: time.Hour}, // its own, even under -race
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

// TestStuckDownloadsHoldNoOneBack: more plugins than CPUs stuck
// downloading all wait at once (no CPU slot is held while waiting), and
// the local plugin beside them is published before any of them ends.
func TestStuckDownloadsHoldNoOneBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	wasm := toolModule("got")
	arrived, release := make(chan struct{}, 64), make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
		w.Write(wasm)
	}))
	defer srv.Close()
	defer close(release)
	dir := t.TempDir()
	local := filepath.Join(dir, "local.wasm")
	write(t, local, string(toolModule("now")))
	n := runtime.NumCPU() + 1
	src := fmt.Sprintf("[[plugin]]\nname = \"local\"\npath = %q\n", local)
	for i := range n {
		src += fmt.Sprintf("[[plugin]]\nname = \"web%d\"\nurl = \"%s/p%d.wasm\"\nsha256 = %q\n", i, srv.URL, i, sha256Hex(wasm))
	}
	cfg := parseTOML(t, dir, src)
	l := NewLoader(LoaderOptions{Engine: newEngine(t), DownloadCacheDir: filepath.Join(dir, "download"), HTTPClient: srv.Client(), Logger: discard()})
	published := make(chan []string, 16)
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	built := make(chan error, 1)
	go func() {
		g, err := l.build(bctx, cfg, nil, func(g *Generation) {
			published <- toolNames(g)
			g.Close(ctx)
		}, 0)
		if err == nil {
			g.Close(ctx)
		}
		built <- err
	}()
	fail := time.After(time.Minute) // a failure bound, not a wait
	for range n {
		select {
		case <-arrived:
		case <-fail:
			t.Fatalf("fewer than %d downloads started at once", n)
		}
	}
	select {
	case got := <-published:
		if !slices.Equal(got, []string{"local_now"}) {
			t.Errorf("published while the downloads wait: %q; want [local_now]", got)
		}
	case <-fail:
		t.Fatal("local was not published while the downloads waited")
	}
	cancel()
	if err := <-built; !errors.Is(err, context.Canceled) {
		t.Errorf("Build after cancel: %v; want context.Canceled", err)
	}
}

// closeSignal is a module whose Close closes closed.
type closeSignal struct {
	Module
	closed chan struct{}
}

func (m closeSignal) Close(ctx context.Context) error {
	close(m.closed)
	return m.Module.Close(ctx)
}

// TestLoadDoesNotWaitForCompile: a compile that does not end holds back
// neither a cancelled build nor a plugin past its load_timeout; the
// module it makes in the end is closed.
func TestLoadDoesNotWaitForCompile(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		loadTimeout time.Duration
		cancel      bool
	}{
		{name: "cancelled", loadTimeout: time.Hour, cancel: true},
		{name: "load_timeout", loadTimeout: 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			file := filepath.Join(dir, "p.wasm")
			write(t, file, "code")
			cfg := config.DefaultConfig()
			cfg.Plugins = []config.Spec{{Name: "p", Path: file, LoadTimeout: tc.loadTimeout}}
			started, release := make(chan struct{}), make(chan struct{})
			mod := closeSignal{fake{tools: []string{tool("t")}}.module(), make(chan struct{})}
			l := NewLoader(LoaderOptions{Logger: discard()})
			l.load = func(context.Context, string, []byte, sandbox.Limits) (Module, error) {
				close(started)
				<-release // a compile ignores its ctx
				return mod, nil
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type result struct {
				g   *Generation
				err error
			}
			built := make(chan result, 1)
			go func() { g, err := l.Build(ctx, cfg, nil); built <- result{g, err} }()
			<-started
			if tc.cancel {
				cancel()
			}
			fail := time.After(time.Minute) // a failure bound, not a wait
			var r result
			select {
			case r = <-built:
			case <-fail:
				close(release)
				t.Fatal("Build waited for the compile")
			}
			if tc.cancel {
				if !errors.Is(r.err, context.Canceled) {
					t.Errorf("Build: %v; want context.Canceled", r.err)
				}
			} else {
				var lte *LoadTimeoutError
				if r.err != nil || !errors.As(r.g.Failed("p"), &lte) {
					t.Errorf("Build: %v, failure %v; want p failed with a *LoadTimeoutError", r.err, r.g.Failed("p"))
				}
				r.g.Close(context.Background())
			}
			close(release)
			select {
			case <-mod.closed:
			case <-fail:
				t.Fatal("the module compiled after the load gave up was not closed")
			}
		})
	}
}
