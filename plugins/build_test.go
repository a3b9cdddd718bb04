//go:build linux

package plugins

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/plugins/source"
)

// buildScript is the build of TestManagerBuild: it "compiles" tool.src,
// which names a prebuilt module, by copying that module to a.wasm. "fail"
// fails like a compiler; "slow" prints its process IDs and waits forever.
const buildScript = `set -e
n=$(cat tool.src)
case $n in
fail) echo "tool.src:1:1: error: no tool called fail" >&2; exit 1;;
slow) sleep 600 & echo "slow pids $$ $!"; wait; exit 1;;
esac
cp "$n.wasm" a.wasm
echo "built $n"
`

// lineLog is a slog handler that sends each line a build prints to a
// channel, so that a test can wait for one.
type lineLog struct{ lines chan string }

func (h lineLog) Enabled(context.Context, slog.Level) bool { return true }
func (h lineLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h lineLog) WithGroup(string) slog.Handler            { return h }
func (h lineLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "plugin build output" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "line" {
			h.lines <- a.Value.String()
		}
		return true
	})
	return nil
}

// TestManagerBuild: a plugin with build = … and watch = … is built before
// its first load, rebuilt and reloaded once on every save of a watched
// source (the artefact its build writes triggers nothing), keeps serving
// its previous version with the build's error lines when a build fails,
// and a newer save cancels a build under way, killing its processes.
func TestManagerBuild(t *testing.T) {
	root := t.TempDir()
	p := func(name string) string { return filepath.Join(root, name) }
	for _, n := range []string{"x", "y", "z"} {
		write(t, p(n+".wasm"), string(toolModule(n)))
	}
	write(t, p("build.sh"), buildScript)
	write(t, p("tool.src"), "x")
	write(t, p("plugins.toml"), "[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\nbuild = \"sh build.sh\"\nwatch = [\"*.src\"]\n")
	lines := make(chan string, 64)
	r := startManager(t, NewLoader(LoaderOptions{Engine: newEngine(t), Logger: slog.New(lineLog{lines})}), p("plugins.toml"))
	waitLine := func(prefix string) string {
		t.Helper()
		for {
			select {
			case l := <-lines:
				if strings.HasPrefix(l, prefix) {
					return l
				}
			case <-time.After(batchTimeout):
				t.Fatalf("the build printed no %q within %v", prefix, batchTimeout)
			}
		}
	}
	check := func(step string, rep ReloadReport, wantTools []string) {
		t.Helper()
		if rep.Err != nil {
			t.Fatalf("%s: %v", step, rep.Err)
		}
		if !rep.Initial && !reflect.DeepEqual(rep.Trigger, []string{p("tool.src")}) {
			t.Errorf("%s: trigger %q; want only tool.src (the artefact's own write reloads nothing)", step, rep.Trigger)
		}
		if got, _ := r.current(); !reflect.DeepEqual(got, wantTools) {
			t.Errorf("%s: tools %q; want %q", step, got, wantTools)
		}
	}

	check("first start, a.wasm missing", r.next(t), []string{"a_x"})
	waitLine("built x")

	write(t, p("tool.src"), "y")
	rep := r.next(t)
	check("save", rep, []string{"a_y"})
	if !reflect.DeepEqual(rep.Changes.Reloaded, []string{"a"}) {
		t.Errorf("save: reloaded %q; want [a]", rep.Changes.Reloaded)
	}
	waitLine("built y")

	write(t, p("tool.src"), "fail")
	rep = r.next(t)
	check("failing build", rep, []string{"a_y"})
	var be *source.BuildError
	if len(rep.Failures) != 1 || !rep.Failures[0].Kept || !errors.As(rep.Failures[0].Err, &be) ||
		!strings.Contains(rep.Failures[0].Err.Error(), "tool.src:1:1: error: no tool called fail") {
		t.Errorf("failing build: failures %v; want a kept a with the compiler's line", rep.Failures)
	}
	waitLine("tool.src:1:1: error")

	write(t, p("tool.src"), "slow")
	pids := strings.Fields(strings.TrimPrefix(waitLine("slow pids "), "slow pids "))
	write(t, p("tool.src"), "z")
	check("save during a build", r.next(t), []string{"a_z"})
	for _, pid := range pids {
		if alive(t, pid) {
			t.Errorf("process %s of the cancelled build is still running", pid)
		}
	}
}

// alive reports whether process pid runs (a zombie is dead, merely not
// reaped yet).
func alive(t *testing.T, pid string) bool {
	t.Helper()
	if _, err := strconv.Atoi(pid); err != nil {
		t.Fatalf("bad pid %q", pid)
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%s/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	return len(f) > 0 && !slices.Contains([]string{"Z", "X"}, f[0])
}
