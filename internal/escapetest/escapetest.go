// Package escapetest prepares the directories that the hostile guest in
// sandbox/testdata/escapeguest attacks, and holds the exact reports it must
// give, so that the sandbox tests and the end-to-end tests through
// `mcphost serve` assert the same thing. It is for tests only.
package escapetest

import (
	"embed"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcphost/mcphost/abi"
)

// Guest paths of the two mounts.
const (
	Dir   = "/w"
	Other = "/o"
)

// Secret is the content of every file outside the mount.
const Secret = "TOP SECRET"

// Scenario is one way of mounting the attacked directory.
type Scenario struct {
	Name     string // names the file of wanted results
	ReadOnly bool   // the mount is read-only
	Links    bool   // the directory holds outward symlinks planted by the host
}

// Scenarios returns the mounts the guest is run against.
func Scenarios() []Scenario {
	return []Scenario{
		{Name: "rw-plain"},
		{Name: "ro-links", ReadOnly: true, Links: true},
		{Name: "rw-links", Links: true},
	}
}

// Tree lays out base/{secret.txt, outside/x.txt, mnt, other} for s:
// mnt holds a.txt ("inside"), sub/b.txt, empty/ and, with s.Links, the
// links leak (absolute, out), rel, chain1 -> chain2 -> rel, etcdir
// (absolute, to outside/), reldir, in -> a.txt and indir -> sub.
func Tree(t testing.TB, s Scenario) (mnt, other, secret string) {
	t.Helper()
	base := t.TempDir()
	mnt, other, secret = filepath.Join(base, "mnt"), filepath.Join(base, "other"), filepath.Join(base, "secret.txt")
	files := map[string]string{
		"secret.txt":    Secret,
		"outside/x.txt": Secret,
		"mnt/a.txt":     "inside",
		"mnt/sub/b.txt": "inside b",
	}
	for name, data := range files {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"mnt/empty", "other"} {
		if err := os.Mkdir(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if s.Links {
		for link, target := range map[string]string{
			"leak":   secret,
			"rel":    "../secret.txt",
			"chain1": "chain2",
			"chain2": "rel",
			"etcdir": filepath.Join(base, "outside"),
			"reldir": "../outside",
			"in":     "a.txt",
			"indir":  "sub",
		} {
			if err := os.Symlink(target, filepath.Join(mnt, link)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return mnt, other, secret
}

// Args returns the arguments of the guest's probe tool.
func Args(s Scenario, secret string) map[string]any {
	return map[string]any{"dir": Dir, "other": Other, "secret": secret, "rw": !s.ReadOnly}
}

// CallInput is the input of the guest's call_tool export for the tool
// name with args, as the sandbox sends it.
func CallInput(name string, args any) []byte {
	a, _ := json.Marshal(args)
	req, _ := json.Marshal(abi.CallToolParams{Name: name, Arguments: a})
	in, _ := json.Marshal(abi.Input{Request: req})
	return in
}

// ResultText returns the text of the output of a call of the tool name:
// one text content, not an error.
func ResultText(name string, out []byte) (string, error) {
	var res abi.CallToolResult
	if err := json.Unmarshal(out, &res); err != nil || res.IsError || len(res.Content) != 1 {
		return "", fmt.Errorf("%s: result %s, %v", name, out, err)
	}
	return res.Content[0].Text, nil
}

//go:embed want
var want embed.FS

// Check compares the probe tool's JSON report with want/<s.Name>.json,
// entry by entry, and checks that nothing left the directory tree.
func Check(t testing.TB, s Scenario, report []byte) {
	t.Helper()
	var got, wantMap map[string]string
	if err := json.Unmarshal(report, &got); err != nil {
		t.Fatalf("%s: report %s: %v", s.Name, report, err)
	}
	b, err := want.ReadFile("want/" + s.Name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &wantMap); err != nil {
		t.Fatal(err)
	}
	for _, k := range slices.Sorted(maps.Keys(wantMap)) {
		if got[k] != wantMap[k] {
			t.Errorf("%s: %s = %q; want %q", s.Name, k, got[k], wantMap[k])
		}
	}
	for k, v := range got {
		if _, ok := wantMap[k]; !ok {
			t.Errorf("%s: unexpected probe %s = %q", s.Name, k, v)
		}
	}
}

// CheckHost checks the host side after a probe: the files outside are
// untouched and nothing was moved out; a read-only mount is unchanged.
func CheckHost(t testing.TB, s Scenario, mnt string) {
	t.Helper()
	base := filepath.Dir(mnt)
	for _, p := range []string{"secret.txt", "outside/x.txt"} {
		if b, err := os.ReadFile(filepath.Join(base, p)); err != nil || string(b) != Secret {
			t.Errorf("%s: %s = %q, %v after the probe", s.Name, p, b, err)
		}
	}
	for _, dir := range []string{base, filepath.Join(base, "outside")} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			switch e.Name() {
			case "secret.txt", "outside", "x.txt", "mnt", "other":
			default:
				t.Errorf("%s: %s appeared outside the mounts", s.Name, filepath.Join(dir, e.Name()))
			}
		}
	}
	if s.ReadOnly {
		if b, err := os.ReadFile(filepath.Join(mnt, "a.txt")); err != nil || string(b) != "inside" {
			t.Errorf("%s: a.txt = %q, %v after the probe; want it unchanged", s.Name, b, err)
		}
		if ents, _ := os.ReadDir(mnt); len(ents) != 11 {
			t.Errorf("%s: the read-only mount holds %d entries; want the 11 it started with", s.Name, len(ents))
		}
	}
}
