package component

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// jcoWit returns a function that runs `jco wit` (npm
// @bytecodealliance/jco, which scripts/components.sh installs beside the
// components it builds) on a file, or skips without it; under CI=true
// its absence fails.
func jcoWit(t *testing.T) func(file string) (string, error) {
	t.Helper()
	dir := os.Getenv("MCPHOST_COMPONENTS")
	jco := filepath.Join(dir, "..", "node_modules", "@bytecodealliance", "jco", "dist", "jco.js")
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(jco)
	}
	if dir == "" || err != nil {
		why := "MCPHOST_COMPONENTS is not set"
		if dir != "" {
			why = err.Error()
		}
		if os.Getenv("CI") == "true" {
			t.Fatalf("node or jco missing: %s (CI=true: scripts/components.sh should have installed them)", why)
		}
		t.Skipf("skipping: node or jco missing: %s; run scripts/components.sh (or eval \"$(scripts/components.sh --env)\")", why)
	}
	// scripts/components.sh copies testdata/launch.mjs beside the
	// node_modules it resolves preview2-shim from.
	launch := filepath.Join(dir, "..", "launch.mjs")
	return func(file string) (string, error) {
		var stderr bytes.Buffer
		cmd := exec.Command(node, launch, jco, "wit", file)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			msg, _, _ := strings.Cut(strings.TrimSpace(stderr.String()), "\n    at ")
			if !strings.Contains(msg, "ComponentError") {
				t.Fatalf("jco wit %s: %v\n%s", file, err, stderr.String())
			}
			return "", errors.New(msg)
		}
		return string(out), nil
	}
}

// worldView is what a component imports and exports, in the words of
// a WIT world: interface names, and functions as "name(params) -> result".
type worldView struct {
	imports, interfaces, funcs []string
}

// parseWorld reads the world `jco wit` prints for a component (its
// package is root:component; other packages' interfaces are named, not
// written out).
func parseWorld(wit string) worldView {
	var v worldView
	for _, line := range strings.Split(wit, "\n") {
		line = strings.TrimSuffix(strings.TrimSpace(line), ";")
		line = strings.ReplaceAll(line, "%", "") // WIT's escape of keywords as names
		kind, rest, ok := strings.Cut(line, " ")
		if !ok || (kind != "import" && kind != "export") {
			continue
		}
		name, fn, isFunc := strings.Cut(rest, ": func")
		switch {
		case kind == "import":
			v.imports = append(v.imports, name)
		case isFunc:
			v.funcs = append(v.funcs, name+fn)
		default:
			v.interfaces = append(v.interfaces, name)
		}
	}
	v.sort()
	return v
}

// viewOf is mcphost's reading of the same component.
func viewOf(c *Component) worldView {
	v := worldView{imports: slices.Clone(c.imports)}
	for name, it := range c.exports {
		if it.sort == sortInstance {
			v.interfaces = append(v.interfaces, name)
		}
	}
	for _, f := range c.exportedFuncs() {
		if f.Interface == "" {
			v.funcs = append(v.funcs, f.Type.signature(f.Name))
		}
	}
	v.sort()
	return v
}

func (v *worldView) sort() {
	slices.Sort(v.imports)
	slices.Sort(v.interfaces)
	slices.Sort(v.funcs)
}

// TestDecodeAgainstJco is a differential test of the decoder against the
// reference (wasm-tools' decoder, through `jco wit`): for every component
// scripts/components.sh built (C, JavaScript, the text format), what
// mcphost reads — the imports, the exported interfaces, and each
// top-level function's WIT signature, types written out — is what jco
// prints. jco writes out only the component's own world, so here
// exported interfaces are compared by name (their functions in
// TestInterfacesAgainstJco). A component jco itself cannot describe
// (the hostile ones) is logged, not compared.
func TestDecodeAgainstJco(t *testing.T) {
	wit := jcoWit(t)
	files, _ := filepath.Glob(filepath.Join(os.Getenv("MCPHOST_COMPONENTS"), "*.wasm"))
	compared := map[string]bool{}
	for _, file := range files {
		if fi, err := os.Lstat(file); err != nil || fi.Mode()&os.ModeSymlink != 0 {
			continue // name.wasm links to name-<hash>.wasm
		}
		b, err := os.ReadFile(file)
		if err != nil || !IsComponent(b) {
			continue // the Extism peers of the benchmarks
		}
		name := strings.SplitN(strings.TrimSuffix(filepath.Base(file), ".wasm"), "-", 2)[0]
		t.Run(filepath.Base(file), func(t *testing.T) {
			ref, err := wit(file)
			if err != nil {
				t.Logf("not compared: jco cannot describe it: %v", err)
				return
			}
			c, err := Decode(b)
			if err != nil {
				t.Fatalf("jco describes it, mcphost refuses it: %v", err)
			}
			want, got := parseWorld(ref), viewOf(c)
			for _, part := range []struct {
				what      string
				got, want []string
			}{
				{"imports", got.imports, want.imports},
				{"exported interfaces", got.interfaces, want.interfaces},
				{"exported functions", got.funcs, want.funcs},
			} {
				if !slices.Equal(part.got, part.want) {
					t.Errorf("%s:\nmcphost %q\n    jco %q", part.what, part.got, part.want)
				}
			}
			if len(want.imports)+len(want.interfaces)+len(want.funcs) == 0 {
				t.Errorf("jco printed an empty world:\n%s", ref)
			}
			compared[name] = true
		})
	}
	for _, name := range []string{"kinds", "net", "app", "nested", "counter"} {
		if !compared[name] {
			t.Errorf("%s was not compared (built by scripts/components.sh?)", name)
		}
	}
}

// TestInterfacesAgainstJco compares what `jco wit` cannot show: the
// functions inside exported interfaces. scripts/components.sh transpiles
// kinds and net with jco (the reference host of the call differential);
// each exported interface's TypeScript declaration lists its functions
// and their parameters, camelCased. mcphost's reading must list the same.
func TestInterfacesAgainstJco(t *testing.T) {
	jcoWit(t) // the same requirement: jco, or skip (CI=true: fail)
	dir := os.Getenv("MCPHOST_COMPONENTS")
	compared := 0
	for _, name := range []string{"kinds", "net"} {
		b, err := os.ReadFile(filepath.Join(dir, name+".wasm"))
		if err != nil {
			t.Fatalf("%v (built by scripts/components.sh?)", err)
		}
		c, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		byIface := map[string][]string{}
		for _, f := range c.exportedFuncs() {
			if f.Interface == "" {
				continue
			}
			params := make([]string, len(f.Type.Params))
			for i, p := range f.Type.Params {
				params[i] = camel(p.Name)
			}
			byIface[f.Interface] = append(byIface[f.Interface], camel(f.Name)+"("+strings.Join(params, ", ")+")")
		}
		for iface, got := range byIface {
			base, _, _ := strings.Cut(iface, "@")
			file := filepath.Join(dir, name+"-js", "interfaces", strings.NewReplacer(":", "-", "/", "-").Replace(base)+".d.ts")
			ts, err := os.ReadFile(file)
			if err != nil {
				t.Errorf("%s exports %s, but jco wrote no %s: %v", name, iface, file, err)
				continue
			}
			want := tsFunctions(string(ts))
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s %s:\nmcphost %q\n    jco %q", name, iface, got, want)
			}
			compared++
		}
	}
	if compared == 0 {
		t.Error("no exported interface was compared (kinds exports mcphost:kinds/shapes)")
	}
}

// tsFunctions lists the functions a jco declaration file declares, as
// "name(param, …)", sorted.
func tsFunctions(ts string) []string {
	var out []string
	for _, line := range strings.Split(ts, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "export function ")
		if !ok {
			continue
		}
		name, args, _ := strings.Cut(rest, "(")
		args, _, _ = strings.Cut(args, ")")
		var params []string
		for _, a := range strings.Split(args, ",") {
			if p, _, ok := strings.Cut(strings.TrimSpace(a), ":"); ok {
				params = append(params, p)
			}
		}
		out = append(out, name+"("+strings.Join(params, ", ")+")")
	}
	slices.Sort(out)
	return out
}

// camel is jco's name for a WIT name: "echo-point" → "echoPoint".
func camel(s string) string {
	parts := strings.Split(s, "-")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}
