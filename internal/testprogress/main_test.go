package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRun runs `go test -json` on a module with a passing, a skipping and
// a failing test, a package without tests and one that does not build, and checks what a person
// sees: a line per package, the failure's output, each skip with its
// reason, the progress line and the verdict.
func TestRun(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go is not on PATH: %v", err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":      "module example.com/m\n\ngo 1.26\n",
		"a/a_test.go": "package a\n\nimport \"testing\"\n\nfunc TestPass(t *testing.T) {}\n\nfunc TestNeedsTool(t *testing.T) { t.Log(\"looking\"); t.Skip(\"skipping: frob is not installed; run scripts/frob.sh\") }\n\nfunc TestSlow(t *testing.T) { t.Run(\"sub\", func(t *testing.T) { t.Skip(\"takes too long under -race; run without -race\") }) }\n",
		"b/b_test.go": "package b\n\nimport \"testing\"\n\nfunc TestBroken(t *testing.T) { t.Error(\"got 1; want 2\") }\n",
		"c/c.go":      "package c\n",
		"d/d_test.go": "package d\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) { undefinedFunc() }\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(goCmd, "test", "-json", "-count=1", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOPROXY=off", "GOWORK=off")
	stream, _ := cmd.Output() // a failing test makes go exit 1
	if len(stream) == 0 {
		t.Fatal("go test -json wrote nothing")
	}

	ticks := make(chan time.Time, 1)
	ticks <- time.Time{} // one progress line, before the events are read or after
	var out bytes.Buffer
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var sum *summary
	code := run(bytes.NewReader(stream), &out, []string{"example.com/m/a", "example.com/m/b", "example.com/m/c", "example.com/m/d"}, ticks, func() time.Time { return clock }, &sum)
	got := out.String()
	if code != 1 {
		t.Errorf("exit status %d; want 1 (a test failed)\n%s", code, got)
	}
	if got, want := strings.Join(sum.raceOnly(), ""), "example.com/m/a TestSlow\n"; got != want {
		t.Errorf("raceOnly = %q; want %q (only the skip that names -race, by its top-level test)", got, want)
	}
	for _, want := range []string{
		"ok    example.com/m/a",
		"FAIL  example.com/m/b",
		"--- FAIL: example.com/m/b TestBroken",
		"got 1; want 2",
		"2 tests skipped",
		"example.com/m/a TestSlow/sub: takes too long under -race; run without -race",
		"example.com/m/a TestNeedsTool: skipping: frob is not installed; run scripts/frob.sh",
		"packages done",
		"FAIL  example.com/m/d",
		"undefinedFunc",
		"\nFAIL: ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "ok    example.com/m/c") {
		t.Errorf("a package without tests got a line:\n%s", got)
	}
}
