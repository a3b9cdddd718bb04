package core

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The operator's files are read within bounds (plugins/internal/opfile): these
// tests drive the real binary with files no reader should take whole.

// rssSlack is how far above its idle RSS mcphost may peak while it
// refuses an oversized skill (the bar).
const rssSlack = 100 << 20

// procStatus returns the fields of /proc/pid/status in bytes (VmRSS,
// VmHWM).
func procStatus(t *testing.T, pid int) map[string]int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc to measure RSS with: %v", err)
	}
	defer f.Close()
	out := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if f := strings.Fields(v); ok && len(f) == 2 && f[1] == "kB" {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			out[k] = n << 10
		}
	}
	return out
}

// sparse makes file hold one byte at offset: a file of offset+1 bytes
// that takes one block of disk.
func sparse(t *testing.T, file string, offset int64) {
	t.Helper()
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{1}, offset); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSparseSkillAttack: a file of 3 GiB (one byte at offset 3 GiB)
// appears in a plugin's skills directory while mcphost serves, put there
// by the operator or written by the plugin itself through a writable
// mount over that directory. The watcher reloads; the reload of that
// plugin fails with a message naming the file and the 16 MiB limit (its
// previous version, skill included, keeps serving); another plugin
// answers calls all along; and mcphost's peak RSS stays within 100 MB of
// its idle RSS (VmHWM, reset before the attack, against VmRSS).
func TestSparseSkillAttack(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mcphost serve")
	}
	guestSrc, err := filepath.Abs("testdata/sparseguest")
	if err != nil {
		t.Fatal(err)
	}
	for _, via := range []string{"operator", "plugin"} {
		t.Run(via, func(t *testing.T) {
			dir := t.TempDir()
			conf := filepath.Join(dir, "plugins.toml")
			writeTestFile(t, filepath.Join(dir, "q.wasm"), systest.WasmPlugin("q", []string{"x"}, nil, nil))
			if err := os.MkdirAll(filepath.Join(dir, "skills/howto"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeTestFile(t, filepath.Join(dir, "skills/howto/SKILL.md"), []byte(skillV1))
			attacker := "\n[[plugin]]\nname = \"p\"\npath = \"p.wasm\"\nskills = [\"skills/*\"]\n"
			writeTestFile(t, filepath.Join(dir, "p.wasm"), systest.WasmPlugin("p", []string{"write_at"}, nil, nil))
			if via == "plugin" {
				attacker = fmt.Sprintf("\n[[plugin]]\nname = \"p\"\nsource = %q\nskills = [%q]\nallowed_paths = [{ host = %q, guest = \"/skills\" }]\n",
					guestSrc, filepath.Join(dir, "skills/*"), filepath.Join(dir, "skills"))
			}
			src := "[server]\nname = \"sparse\"\nstartup_wait = \"300s\"\n" + attacker + "\n[[plugin]]\nname = \"q\"\npath = \"q.wasm\"\n"
			if _, err := config.ParseConfig(conf, []byte(src)); err != nil && via == "plugin" {
				t.Skipf("the config refuses a writable mount over the plugin's own skills directory (%v); the operator case covers the file", err)
			}
			writeTestFile(t, conf, []byte(src))

			e := &systest.ReloadEnv{Dir: dir, Conf: conf}
			e.S = systest.StartServer(t, mcp.NewClient(&mcp.Implementation{Name: "sparse", Version: "1"}, nil), "--config", conf)
			ctx := context.Background()
			const uri = "skill://p/howto/SKILL.md"
			if rr, err := e.S.Session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil || rr.Contents[0].Text != skillV1 {
				t.Fatalf("resources/read %s before the attack: %v", uri, err)
			}
			for range 20 { // warm up the path the calls below take
				e.Call(t, "q_x")
			}
			pid := e.S.Cmd.Process.Pid
			idle := procStatus(t, pid)["VmRSS"]
			// Reset VmHWM to the current RSS, so that it shows the peak
			// from here on, not the startup's.
			if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
				t.Skipf("cannot reset the peak RSS of mcphost: %v", err)
			}

			// Another plugin keeps serving calls throughout.
			var calls atomic.Int64
			var callErr error
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					res, err := e.S.Session.CallTool(ctx, &mcp.CallToolParams{Name: "q_x", Arguments: map[string]any{}})
					if err == nil && (res.IsError || systest.TextOf(t, res) != "q") {
						err = fmt.Errorf("answered %+v", res)
					}
					if err != nil {
						callErr = err
						return
					}
					calls.Add(1)
				}
			})

			file := filepath.Join(dir, "skills/howto/data.bin")
			before := calls.Load()
			if via == "plugin" {
				res, err := e.S.Session.CallTool(ctx, &mcp.CallToolParams{Name: "p_write_at", Arguments: map[string]any{"path": "/skills/howto/data.bin", "offset": 3 << 30}})
				if err != nil || res.IsError {
					t.Fatalf("p_write_at: %+v, %v", res, err)
				}
			} else {
				sparse(t, file, 3<<30)
			}
			if st, err := os.Stat(file); err != nil || st.Size() != 3<<30+1 {
				t.Fatalf("the sparse file: %v, %v; want 3 GiB and a byte", st, err)
			}
			want := file + ` is 3221225473 bytes, which takes the files under ` + filepath.Join(dir, "skills/howto") + ` past their limit of 16 MiB (16777216 bytes)`
			logged := e.WaitStderr("3221225473 bytes")
			close(stop)
			wg.Wait()
			during := calls.Load() - before
			status := procStatus(t, pid)
			if callErr != nil {
				t.Errorf("plugin q, called during the attack: %v", callErr)
			}
			if during < 1 {
				t.Errorf("plugin q answered %d calls during the attack; want some", during)
			}
			var line string
			for l := range strings.Lines(logged) {
				if strings.Contains(l, "3221225473 bytes") {
					line = l
				}
			}
			if !strings.Contains(line, `msg="plugin failed" plugin=p`) || !strings.Contains(line, "kept=true") ||
				!strings.Contains(strings.ReplaceAll(line, `\"`, `"`), want) {
				t.Errorf("stderr line %q; want plugin p failed, kept, saying %q\nstderr:\n%s", line, want, logged)
			}
			if rr, err := e.S.Session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil || rr.Contents[0].Text != skillV1 {
				t.Errorf("resources/read %s after the attack: %v; want the previous version's skill", uri, err)
			}
			peak := status["VmHWM"]
			t.Logf("mcphost RSS: idle %d MB, peak %d MB during the attack; q answered %d calls meanwhile", idle>>20, peak>>20, during)
			if peak-idle > rssSlack {
				t.Errorf("mcphost peaked at %d MB, %d MB above its idle %d MB; want at most %d MB above", peak>>20, (peak-idle)>>20, idle>>20, rssSlack>>20)
			}
		})
	}
}

// TestValidateSparseSkill: `mcphost validate` on a plugin that ships a
// skill with a 1 GiB sparse file fails that plugin, naming the file and
// the limit, and peaks within 100 MB of what it takes without the file.
func TestValidateSparseSkill(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mcphost validate")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "plugins.toml")
	writeTestFile(t, filepath.Join(dir, "p.wasm"), systest.WasmPlugin("p", []string{"x"}, nil, nil))
	writeTestFile(t, filepath.Join(dir, "q.wasm"), systest.WasmPlugin("q", []string{"x"}, nil, nil))
	if err := os.MkdirAll(filepath.Join(dir, "skills/howto"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, "skills/howto/SKILL.md"), []byte(skillV1))
	writeTestFile(t, conf, []byte("[[plugin]]\nname = \"p\"\npath = \"p.wasm\"\nskills = [\"skills/*\"]\n\n[[plugin]]\nname = \"q\"\npath = \"q.wasm\"\n"))
	validate := func() (string, int64, error) {
		cmd := exec.Command(systest.Binary(t), "validate", "--config", conf)
		out, err := cmd.CombinedOutput()
		ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		if ru == nil {
			t.Skip("no rusage to measure peak RSS with")
		}
		return string(out), ru.Maxrss << 10, err // Linux: kB
	}
	out, base, err := validate()
	if err != nil || !strings.Contains(out, "skill     skill://p/howto/SKILL.md") {
		t.Fatalf("validate without the file: %v\n%s", err, out)
	}
	file := filepath.Join(dir, "skills/howto/big.bin")
	sparse(t, file, 1<<30-1)
	out, peak, err := validate()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("validate with a 1 GiB skill file: %v; want it to fail\n%s", err, out)
	}
	if want := "FAILED plugin p: skills "; !strings.Contains(out, want) || !strings.Contains(out, file+" is 1073741824 bytes") || !strings.Contains(out, "16 MiB") {
		t.Errorf("validate said:\n%s\nwant %q naming %s and the 16 MiB limit", out, want, file)
	}
	if !strings.Contains(out, "plugin q (") {
		t.Errorf("validate said:\n%s\nwant plugin q loaded beside the failing p", out)
	}
	t.Logf("validate peak RSS: %d MB without the file, %d MB with it", base>>20, peak>>20)
	if peak-base > rssSlack {
		t.Errorf("validate peaked at %d MB with a 1 GiB sparse skill file, %d MB without; want at most %d MB more", peak>>20, base>>20, rssSlack>>20)
	}
}

// TestAppPageSymlink: a [plugin.ui] page that is a symbolic link out of
// the plugin's directory (ui/show.html -> a credentials file) is never
// served. Swapped in while mcphost serves, the reload is refused, naming
// the page, and resources/read keeps serving the page it had; at load
// (`mcphost validate`) it is an error naming the page.
func TestAppPageSymlink(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mcphost serve")
	}
	const secret = "aws_secret_access_key = hunter2"
	credentials := filepath.Join(t.TempDir(), "credentials")
	writeTestFile(t, credentials, []byte(secret))
	dir := t.TempDir()
	conf := filepath.Join(dir, "plugins.toml")
	page := filepath.Join(dir, "ui", "show.html")
	if err := os.MkdirAll(filepath.Dir(page), 0o755); err != nil {
		t.Fatal(err)
	}
	const html = "<!doctype html><p>the operator's page</p>"
	writeTestFile(t, page, []byte(html))
	writeTestFile(t, filepath.Join(dir, "a.wasm"), systest.WasmPlugin("a", []string{"show"}, nil, nil))
	writeTestFile(t, conf, []byte("[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n[plugin.ui]\ntools = { show = \"ui/show.html\" }\n"))

	e := &systest.ReloadEnv{Dir: dir, Conf: conf}
	e.S = systest.StartServer(t, mcp.NewClient(&mcp.Implementation{Name: "apps", Version: "1"}, nil), "--config", conf)
	ctx := context.Background()
	res, err := e.S.Session.ListTools(ctx, nil)
	if err != nil || len(res.Tools) != 1 {
		t.Fatalf("tools/list: %v, %+v", err, res)
	}
	ui, _ := res.Tools[0].Meta["ui"].(map[string]any)
	uri, _ := ui["resourceUri"].(string)
	if uri == "" {
		t.Fatalf("tool %s has no _meta.ui.resourceUri: %+v", res.Tools[0].Name, res.Tools[0].Meta)
	}
	read := func() string {
		t.Helper()
		rr, err := e.S.Session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("resources/read %s: %v", uri, err)
		}
		return rr.Contents[0].Text
	}
	if got := read(); got != html {
		t.Fatalf("resources/read %s = %q; want the page", uri, got)
	}

	// The link replaces the page in one rename, as an editor saves.
	tmp := filepath.Join(dir, "ui", "show.html.tmp")
	if err := os.Symlink(credentials, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, page); err != nil {
		t.Fatal(err)
	}
	want := page + " leads outside " + dir
	logged := e.WaitStderr(want)
	if !strings.Contains(logged, `msg="reload failed"`) || !strings.Contains(logged, want) {
		t.Errorf("stderr lacks the refused reload naming the page (%q):\n%s", want, logged)
	}
	if got := read(); got != html {
		t.Errorf("resources/read %s after the link = %q; want the page served before", uri, got)
	}

	out, err := exec.Command(systest.Binary(t), "validate", "--config", conf).CombinedOutput()
	if err == nil || !strings.Contains(string(out), want) || strings.Contains(string(out), "hunter2") {
		t.Errorf("validate with the link: %v\n%s\nwant an error saying %q", err, out, want)
	}
}
