// Command testprogress reads `go test -json` on stdin and writes what a
// person waiting on the whole suite wants to see: a line per package as it
// ends, a line every minute naming the packages still running, the output
// of every failed test, and at the end every skipped test with its reason,
// so that a test that could not run (a missing tool) is never silent. It
// is the filter scripts/test.sh runs the README's test command through; a
// test helper, like everything under internal/.
//
//	go test -json -race ./... | go run ./internal/testprogress $(go list ./...)
//
// The arguments are the packages expected, for the progress lines. It
// exits 1 when a test or a build failed.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	ImportPath string // build-output and build-fail
	Test       string
	Elapsed    float64
	Output     string
}

func main() {
	every := flag.Duration("every", time.Minute, "how often to name the packages still running")
	raceSkips := flag.String("race-skips", "", "write here, a line each (package, space, test), the top-level tests that skipped because the race detector is on, for a run without it")
	flag.Parse()
	tick := time.NewTicker(*every)
	defer tick.Stop()
	var s *summary
	code := run(os.Stdin, os.Stdout, flag.Args(), tick.C, time.Now, &s)
	if *raceSkips != "" {
		if err := os.WriteFile(*raceSkips, []byte(strings.Join(s.raceOnly(), "")), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "testprogress:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// run filters events from r to w. pkgs are the packages expected; ticks
// ask for a progress line.
func run(r io.Reader, w io.Writer, pkgs []string, ticks <-chan time.Time, now func() time.Time, sum ...**summary) int {
	lines := make(chan []byte)
	go func() { // exits when r ends; run drains lines until then
		defer close(lines)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<26)
		for sc.Scan() {
			lines <- slices.Clone(sc.Bytes())
		}
	}()
	s := newSummary(w, pkgs, now())
	if len(sum) > 0 {
		*sum[0] = s
	}
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				return s.finish(now())
			}
			var e event
			if json.Unmarshal(line, &e) != nil || (e.Action == "" && e.Package == "") {
				fmt.Fprintf(w, "%s\n", line) // go's own messages (a build error in a test binary's setup)
				continue
			}
			s.add(e)
		case <-ticks:
			s.progress(now())
		}
	}
}

type summary struct {
	w       io.Writer
	start   time.Time
	pending []string            // packages not yet ended, in go list order
	output  map[string][]string // package/test → its output lines so far
	skipped []string            // "pkg TestX: reason"
	race    []string            // "importpath TestX\n": top-level tests a skip under -race named
	failed  int
	done    int
}

func newSummary(w io.Writer, pkgs []string, start time.Time) *summary {
	return &summary{w: w, start: start, pending: slices.Clone(pkgs), output: map[string][]string{}}
}

func (s *summary) add(e event) {
	key := e.Package + " " + e.Test
	switch e.Action {
	case "build-output":
		s.output[e.ImportPath+" build"] = append(s.output[e.ImportPath+" build"], e.Output)
	case "build-fail": // counted with its package's fail, which follows
		fmt.Fprintf(s.w, "FAIL  %s (build)\n%s", e.ImportPath, strings.Join(s.output[e.ImportPath+" build"], ""))
	case "output":
		if e.Test != "" && (strings.HasPrefix(e.Output, "=== ") || strings.HasPrefix(e.Output, "--- ")) {
			return
		}
		s.output[key] = append(s.output[key], e.Output)
	case "skip":
		if e.Test == "" {
			s.end(e, "") // [no test files]
			return
		}
		why := reason(s.output[key])
		s.skipped = append(s.skipped, fmt.Sprintf("%s %s: %s", short(e.Package), e.Test, why))
		if strings.Contains(why, "-race") {
			top, _, _ := strings.Cut(e.Test, "/")
			if l := e.Package + " " + top + "\n"; !slices.Contains(s.race, l) {
				s.race = append(s.race, l)
			}
		}
		delete(s.output, key)
	case "pass":
		if e.Test == "" {
			s.end(e, "ok")
			return
		}
		delete(s.output, key)
	case "fail":
		s.failed++
		if e.Test == "" {
			for _, l := range s.output[key] { // the package's own lines (a panic, a timeout), not go's verdict
				if l != "FAIL\n" && !strings.HasPrefix(l, "FAIL\t") {
					fmt.Fprint(s.w, l)
				}
			}
			s.end(e, "FAIL")
			return
		}
		fmt.Fprintf(s.w, "--- FAIL: %s %s (%.1fs)\n%s", short(e.Package), e.Test, e.Elapsed, strings.Join(s.output[key], ""))
		delete(s.output, key)
	}
}

// end records a package's end and reports it unless status is "" (a
// package without tests).
func (s *summary) end(e event, status string) {
	delete(s.output, e.Package+" ")
	if i := slices.Index(s.pending, e.Package); i >= 0 {
		s.pending = slices.Delete(s.pending, i, i+1)
	}
	s.done++
	if status != "" {
		fmt.Fprintf(s.w, "%-4s  %-40s %s\n", status, short(e.Package), time.Duration(e.Elapsed*float64(time.Second)).Round(time.Second/10))
	}
}

// progress names the packages still running.
func (s *summary) progress(now time.Time) {
	el := now.Sub(s.start).Round(time.Second)
	if len(s.pending) == 0 {
		fmt.Fprintf(s.w, "…     %s: %d packages done\n", el, s.done)
		return
	}
	names := make([]string, len(s.pending))
	for i, p := range s.pending {
		names[i] = short(p)
	}
	fmt.Fprintf(s.w, "…     %s: %d packages done, %d running or waiting: %s\n", el, s.done, len(names), strings.Join(names, " "))
}

// finish prints the skips and the verdict, and returns the exit status.
func (s *summary) finish(now time.Time) int {
	if len(s.skipped) > 0 {
		fmt.Fprintf(s.w, "\n%d tests skipped (each says why; CI=true makes a missing tool a failure):\n", len(s.skipped))
		for _, k := range s.skipped {
			fmt.Fprintf(s.w, "  %s\n", k)
		}
	}
	el := now.Sub(s.start).Round(time.Second)
	if s.failed > 0 {
		fmt.Fprintf(s.w, "\nFAIL: %d failures in %s\n", s.failed, el)
		return 1
	}
	fmt.Fprintf(s.w, "\nPASS: %d packages in %s\n", s.done, el)
	return 0
}

// raceOnly lists the top-level tests that skipped because the race
// detector is on ("importpath TestX\n" each), for scripts/test.sh to run
// again without it.
func (s *summary) raceOnly() []string { return s.race }

// reason is the last line a skipped test logged (its t.Skip message),
// without the file:line prefix.
func reason(out []string) string {
	for i := len(out) - 1; i >= 0; i-- {
		l := strings.TrimSpace(out[i])
		if l == "" {
			continue
		}
		if _, msg, ok := strings.Cut(l, ": "); ok && strings.Contains(l[:len(l)-len(msg)], ".go:") {
			l = msg
		}
		return l
	}
	return "(no reason given)"
}

// short drops the module path from a package path.
func short(pkg string) string {
	if p, ok := strings.CutPrefix(pkg, "github.com/mcphost/mcphost/"); ok {
		return p
	}
	return pkg
}
