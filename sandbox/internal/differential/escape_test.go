package differential

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/escapetest"
	"github.com/mcphost/mcphost/internal/logtest"
	"github.com/mcphost/mcphost/internal/wasmgen"
	"github.com/mcphost/mcphost/sandbox"
	"github.com/mcphost/mcphost/sandbox/internal/coreruntime"
	"github.com/mcphost/mcphost/sandbox/internal/oracle"
)

var escapeGuest = &wasmgen.GoGuest{Pkg: "../../testdata/escapeguest"}

// TestEscapeGuestOnReference runs the hostile guest on go-sdk against each
// kind of mount, with the reports and host-side checks sandbox's
// TestEscapeGuest asserts on the native kernel: the mounts (rootfs) keep
// it confined whichever runtime runs it.
func TestEscapeGuestOnReference(t *testing.T) {
	wasm := guest(t, escapeGuest)
	for _, s := range escapetest.Scenarios() {
		t.Run(s.Name, func(t *testing.T) {
			mnt, other, secret := escapetest.Tree(t, s)
			// An Engine of its own, on the shared cache, so that the log
			// holds this test's lines only.
			log, rec := logtest.New()
			eng, err := sandbox.NewEngine(context.Background(), sandbox.EngineOptions{CacheDir: filepath.Join(testDir, "cache"), Logger: log})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { eng.Close(context.Background()) })
			ctx := coreruntime.With(context.Background(), coreruntime.Choice{New: oracle.New})
			m, err := eng.Load(ctx, t.Name(), wasm, sandbox.Limits{Instances: 1, AllowedPaths: []sandbox.Mount{
				{Host: mnt, Guest: escapetest.Dir, ReadOnly: s.ReadOnly},
				{Host: other, Guest: escapetest.Other},
			}})
			if err != nil {
				t.Fatal(err)
			}
			out, err := m.Call(context.Background(), abi.ExportCallTool, escapetest.CallInput("probe", escapetest.Args(s, secret)))
			if err != nil {
				t.Fatal(err)
			}
			report, err := escapetest.ResultText("probe", out)
			if err != nil {
				t.Fatal(err)
			}
			escapetest.Check(t, s, []byte(report))
			escapetest.CheckHost(t, s, mnt)
			if len(rec.Matching("WARN filesystem escape refused plugin="+t.Name())) == 0 {
				t.Errorf("no escape warning in the log: %q", rec.All())
			}
		})
	}
}
