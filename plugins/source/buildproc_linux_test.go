package source

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildChildEnv makes the test binary a stand-in for mcphost that builds
// the plugin in the directory it names (into $MCPHOST_TEST_BUILD_CACHE)
// and exits.
const buildChildEnv = "MCPHOST_TEST_BUILD_CHILD"

func TestMain(m *testing.M) {
	if dir := os.Getenv(buildChildEnv); dir != "" {
		_, err := BuildGo(context.Background(), dir, BuildOptions{CacheDir: os.Getenv("MCPHOST_TEST_BUILD_CACHE")})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// proc is one process as /proc shows it.
type proc struct {
	pid, ppid, pgrp int
	state           string
	cmdline         string
}

// procs lists the live processes (zombies are dead, merely unreaped).
func procs(t *testing.T) map[int]proc {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]proc{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces.
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) < 3 || f[0] == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		pgrp, _ := strconv.Atoi(f[2])
		cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out[pid] = proc{pid, ppid, pgrp, f[0], strings.ReplaceAll(string(cmd), "\x00", " ")}
	}
	return out
}

// waitFor checks cond every 20 ms until it holds, failing t after limit:
// a bound on a wait for a condition, not a delay.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(limit)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("after %v: %s", limit, what)
		}
	}
}

// TestBuildDiesWithMcphost: a mcphost killed with SIGKILL during a build
// leaves no part of the build running: not go, not the compilers it
// started. The stand-in for mcphost is this test binary, building the
// test plugin with an empty Go build cache (so that the build is slow).
func TestBuildDiesWithMcphost(t *testing.T) {
	needGo(t)
	dir, _ := filepath.Abs("testdata/goodplugin")
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), buildChildEnv+"="+dir, "MCPHOST_TEST_BUILD_CACHE="+t.TempDir(), "GOCACHE="+t.TempDir())
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { // exits when the child does
		child.Wait()
		close(exited)
	}()
	defer func() {
		child.Process.Kill()
		<-exited
	}()

	// The build: what the child started with -buildmode=c-shared, and
	// everything below it, once a compiler runs.
	var tree map[int]proc
	waitFor(t, 2*time.Minute, "no compiler running under the child's go build", func() bool {
		ps := procs(t)
		tree = map[int]proc{}
		for _, p := range ps {
			if p.ppid == child.Process.Pid && strings.Contains(p.cmdline, "-buildmode=c-shared") {
				tree[p.pid] = p
			}
		}
		for grew := true; grew; {
			grew = false
			for _, p := range ps {
				if _, in := tree[p.pid]; !in {
					if _, parent := tree[p.ppid]; parent {
						tree[p.pid] = p
						grew = true
					}
				}
			}
		}
		for _, p := range tree {
			if strings.Contains(p.cmdline, "/compile ") {
				return true
			}
		}
		return false
	})
	group := 0
	for _, p := range tree {
		if p.ppid == child.Process.Pid {
			group = p.pgrp
		}
	}
	if group == syscall.Getpgrp() {
		t.Errorf("the build runs in the test's own process group %d; want a group of its own", group)
	}

	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	waitFor(t, 20*time.Second, "the build outlived the process that started it", func() bool {
		for _, p := range procs(t) {
			if _, in := tree[p.pid]; in || p.pgrp == group && group != syscall.Getpgrp() {
				return false
			}
		}
		return true
	})
}
