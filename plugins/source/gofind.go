package source

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// GoNotFoundError says that a Go-source plugin needs a build and no go
// command was found. Either Configured is the go setting of the config,
// which names no executable file (a set go is never replaced by a search),
// or Tried lists where [FindGo] looked, in order.
type GoNotFoundError struct {
	Configured string
	Tried      []string
}

func (e *GoNotFoundError) Error() string {
	if e.Configured != "" {
		return fmt.Sprintf("the go command is needed to build this plugin and was not found: "+
			"go = %q in the [server] table of plugins.toml is not an executable file "+
			"(with go set, mcphost looks nowhere else); set go to the path of your go command "+
			"(`go env GOROOT` + /bin/go), or remove the setting to search PATH, $GOROOT/bin "+
			"and the usual install locations, or install Go 1.26 or later from https://go.dev/dl",
			e.Configured)
	}
	return fmt.Sprintf("the go command is needed to build this plugin and was not found "+
		"(looked in PATH, $GOROOT/bin and %s); install Go 1.26 or later from https://go.dev/dl, "+
		"or set go = \"/path/to/go\" in the [server] table of plugins.toml, "+
		"or add Go's bin directory to the PATH your MCP client gives mcphost",
		strings.Join(e.Tried, ", "))
}

// FindGo returns the go command a build would run: the one on PATH, else
// $GOROOT/bin/go, else the first of the usual install locations that
// exists (/usr/local/go/bin, ~/go/bin, the newest ~/sdk/go*/bin,
// /opt/homebrew/bin, /usr/local/bin, /usr/lib/go/bin, the newest
// /usr/lib/go-*/bin, /snap/bin). MCP clients often start servers with a
// short PATH that leaves Go out; these are where installers put it. The
// error is a *GoNotFoundError.
func FindGo() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	tried := goCandidates()
	for _, c := range tried {
		if isExecutable(c) {
			return c, nil
		}
	}
	return "", &GoNotFoundError{Tried: tried}
}

func goCandidates() []string {
	exe := "go"
	if runtime.GOOS == "windows" {
		exe = "go.exe"
	}
	var dirs []string
	if r := os.Getenv("GOROOT"); r != "" {
		dirs = append(dirs, filepath.Join(r, "bin"))
	}
	dirs = append(dirs, "/usr/local/go/bin")
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "go", "bin"))
		dirs = append(dirs, newestGlob(filepath.Join(home, "sdk", "go*", "bin"))...)
	}
	dirs = append(dirs, "/opt/homebrew/bin", "/usr/local/bin", "/usr/lib/go/bin")
	dirs = append(dirs, newestGlob("/usr/lib/go-*/bin")...)
	dirs = append(dirs, "/snap/bin")
	if runtime.GOOS == "windows" {
		dirs = append(dirs, `C:\Program Files\Go\bin`)
	}
	out := make([]string, len(dirs))
	for i, d := range dirs {
		out[i] = filepath.Join(d, exe)
	}
	return out
}

// newestGlob returns the matches of pattern, the highest version first
// (go1.26.8 before go1.26.10 would be wrong, so compare numerically).
func newestGlob(pattern string) []string {
	m, _ := filepath.Glob(pattern)
	slices.SortFunc(m, func(a, b string) int { return compareVersions(b, a) })
	return m
}

// compareVersions compares two strings by their runs of digits as numbers
// and the rest as text.
func compareVersions(a, b string) int {
	for a != "" && b != "" {
		na, ra := leadingNumber(a)
		nb, rb := leadingNumber(b)
		switch {
		case na >= 0 && nb >= 0:
			if na != nb {
				return na - nb
			}
			a, b = ra, rb
		case a[0] != b[0]:
			return int(a[0]) - int(b[0])
		default:
			a, b = a[1:], b[1:]
		}
	}
	return len(a) - len(b)
}

func leadingNumber(s string) (int, string) {
	i := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' && i < 9 {
		i++
	}
	if i == 0 {
		return -1, s
	}
	n := 0
	for _, c := range s[:i] {
		n = n*10 + int(c-'0')
	}
	return n, s[i:]
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return runtime.GOOS == "windows" || fi.Mode().Perm()&0o111 != 0
}
