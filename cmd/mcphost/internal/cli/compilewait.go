package cli

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// retryCompileWait is how long serve waits at exit for a compile that an
// earlier exit left unfinished. On a loaded machine a compile can take
// longer than --compile-wait and a session, and every short run would
// then throw it away and start it again: the cache would never fill. A
// compile abandoned once gets this much the next time, so the second
// short run stores it. A signal still ends the wait at once.
const retryCompileWait = 5 * time.Minute

// abandonedFile records, per plugin, how many exits in a row left its
// compile unfinished.
func abandonedFile() string { return filepath.Join(cacheRoot(), "compiles-unfinished.json") }

// exitCompiles is what serve knows at exit about the compiles still
// running and the ones earlier exits left.
type exitCompiles struct {
	file      string
	abandoned map[string]int
	running   []string
	wait      time.Duration // as asked (--compile-wait)
}

// exitCompileWait returns how long to wait at exit for the compiles in
// running: wait, or retryCompileWait when an earlier exit left one of them
// unfinished (said on log). wait 0 means do not wait, and stays 0.
func exitCompileWait(file string, running []string, wait time.Duration, log *slog.Logger) (time.Duration, *exitCompiles) {
	x := &exitCompiles{file: file, abandoned: map[string]int{}, running: running, wait: wait}
	if data, err := os.ReadFile(file); err == nil {
		_ = json.Unmarshal(data, &x.abandoned) // unreadable: as if empty
	}
	if wait <= 0 || wait >= retryCompileWait {
		return wait, x
	}
	var again []string
	for _, p := range running {
		if x.abandoned[p] > 0 {
			again = append(again, p)
		}
	}
	if len(again) == 0 {
		return wait, x
	}
	log.Info("compiles an earlier exit left unfinished: waiting longer this time, so that they reach the cache (interrupt to stop now)",
		"plugins", again, "up_to", retryCompileWait)
	return retryCompileWait, x
}

// record notes which compiles this exit left unfinished (left), so that
// the next exit waits longer for them, and forgets the ones that finished.
func (x *exitCompiles) record(left []string, log *slog.Logger) {
	if len(left) > 0 && x.wait > 0 {
		log.Info("the next exit waits longer for these compiles, so that a later short run stores them", "plugins", left, "up_to", retryCompileWait)
	}
	changed := false
	for _, p := range x.running {
		switch {
		case slices.Contains(left, p):
			x.abandoned[p]++
			changed = true
		case x.abandoned[p] > 0:
			delete(x.abandoned, p)
			changed = true
		}
	}
	if !changed {
		return
	}
	data, err := json.Marshal(x.abandoned)
	if err != nil {
		return
	}
	// Best effort: without it the next exit waits --compile-wait only.
	if os.MkdirAll(filepath.Dir(x.file), 0o700) != nil {
		return
	}
	tmp := x.file + ".tmp"
	if os.WriteFile(tmp, data, 0o600) == nil {
		_ = os.Rename(tmp, x.file)
	}
}
