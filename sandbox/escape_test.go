package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/internal/escapetest"
)

// loadEscapeGuest loads testdata/escapeguest, the hostile guest, with mnt
// at escapetest.Dir and other at escapetest.Other.
func loadEscapeGuest(t *testing.T, mnt, other string, ro bool, instances int) *Module {
	t.Helper()
	escapeWasm := buildGuest(t, escapeGuest)
	m, err := testEngine.Load(context.Background(), t.Name(), escapeWasm, Limits{Instances: instances, AllowedPaths: []Mount{
		{Host: mnt, Guest: escapetest.Dir, ReadOnly: ro},
		{Host: other, Guest: escapetest.Other},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	return m
}

// callTool calls a tool of an sdk-guest module and returns its text.
func callTool(m *Module, name string, args any) (string, error) {
	out, err := m.Call(context.Background(), abi.ExportCallTool, escapetest.CallInput(name, args))
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return escapetest.ResultText(name, out)
}

// TestEscapeGuest runs the hostile guest against each kind of mount and
// asserts its whole report (internal/escapetest/want) and the host side
// (sandbox/internal/differential asserts the same on go-sdk: the
// confinement is the same whichever runs the guest).
func TestEscapeGuest(t *testing.T) {
	for _, s := range escapetest.Scenarios() {
		t.Run(s.Name, func(t *testing.T) {
			mnt, other, secret := escapetest.Tree(t, s)
			m := loadEscapeGuest(t, mnt, other, s.ReadOnly, 1)
			report, err := callTool(m, "probe", escapetest.Args(s, secret))
			if err != nil {
				t.Fatal(err)
			}
			escapetest.Check(t, s, []byte(report))
			escapetest.CheckHost(t, s, mnt)
			if want := "plugin=" + t.Name(); !testLogs.Contains(want) || !testLogs.Contains("filesystem escape refused") {
				t.Errorf("no escape warning with %s in the log", want)
			}
		})
	}
}

// TestEscapeRace swaps the link race between a file inside and a path
// outside while guests read it: from the host (absolute target, atomic
// rename) and from a second guest instance (relative target through a
// directory link). No read may ever return anything from outside.
func TestEscapeRace(t *testing.T) {
	s := escapetest.Scenario{Name: "race", Links: true}
	mnt, other, secret := escapetest.Tree(t, s)
	m := loadEscapeGuest(t, mnt, other, false, 3)
	link := filepath.Join(mnt, "race")
	if err := os.Symlink("a.txt", link); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var swaps int
	wg.Go(func() { // the host swapper: runs until the readers are done
		tmp := filepath.Join(mnt, "race.host")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			target := "a.txt"
			if i%2 == 1 {
				target = secret
			}
			os.Remove(tmp)
			if os.Symlink(target, tmp) == nil && os.Rename(tmp, link) == nil {
				swaps++
			}
		}
	})
	var guestSwaps string
	var swapErr error
	wg.Go(func() {
		guestSwaps, swapErr = callTool(m, "race_swap", map[string]any{"dir": escapetest.Dir, "n": 300})
	})
	var reports [2]string
	var errs [2]error
	var readers sync.WaitGroup
	for i := range reports {
		readers.Go(func() {
			reports[i], errs[i] = callTool(m, "race_open", map[string]any{"dir": escapetest.Dir, "n": 2000})
		})
	}
	readers.Wait()
	close(stop)
	wg.Wait()
	if err := errors.Join(append(errs[:], swapErr)...); err != nil {
		t.Fatal(err)
	}
	inside := 0
	for _, r := range reports {
		var counts map[string]int
		if err := json.Unmarshal([]byte(r), &counts); err != nil {
			t.Fatal(err)
		}
		total := 0
		for k, n := range counts {
			total += n
			switch {
			case k == "inside":
				inside += n
			case k == "leak":
				t.Errorf("%d reads returned data from outside the mount: %s", n, r)
			case !strings.HasPrefix(k, "refused:"):
				t.Errorf("unexpected outcome %s", k)
			}
		}
		if total != 2000 {
			t.Errorf("report %s counts %d reads; want 2000", r, total)
		}
	}
	t.Logf("host swaps %d, guest %s, reads %v", swaps, guestSwaps, reports)
	if inside == 0 || swaps == 0 {
		t.Errorf("inside reads %d, host swaps %d: the race did not run", inside, swaps)
	}
}
