package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestComponentDifferential runs the same calls on the kinds component
// through mcphost and through the reference host (jco transpile +
// preview2-shim in Node, testdata/differential.mjs) and wants the same
// results: every type kind, both directions, ok and err.
func TestComponentDifferential(t *testing.T) {
	diffComponent(t, "kinds", Limits{Instances: 1}, []componentCase{
		{"greet", `{"name":"wörld ✓ 𝄞"}`},
		{"greet", `{"name":""}`},
		{"add", `{"a":255,"b":-32768,"c":4294967295,"d":-9223372036854775807,"e":1}`},
		{"add", `{"a":0,"b":32767,"c":0,"d":9223372036854775000,"e":18446744073709551615}`},
		{"swap-floats", `{"a":1.5,"b":-2.25}`},
		{"swap-floats", `{"a":-0.125,"b":1e300}`},
		{"next-char", `{"c":"ÿ","b":false}`},
		{"next-char", `{"c":"𝄞","b":true}`},
		{"reverse", `{"xs":["α","β","γδ",""]}`},
		{"reverse", `{"xs":[]}`},
		{"double", `{"o":21}`},
		{"double", `{"o":null}`},
		{"divide", `{"a":7,"b":2}`},
		{"divide", `{"a":-7,"b":0}`},
		{"sum17", `{"a1":1,"a2":2,"a3":3,"a4":4,"a5":5,"a6":6,"a7":7,"a8":8,"a9":9,"a10":10,"a11":11,"a12":12,"a13":13,"a14":14,"a15":15,"a16":16,"a17":4294967295}`},
		{"echo-point", `{"p":{"x":2147483647,"y":-2,"label":"naïve"}}`},
		{"next-color", `{"c":"blue"}`},
		{"toggle-exec", `{"p":["read","exec"]}`},
		{"toggle-exec", `{"p":[]}`},
		{"scale", `{"s":{"circle":1.25}}`},
		{"scale", `{"s":{"rect":{"x":3,"y":4,"label":"ü"}}}`},
		{"scale", `{"s":{"empty":null}}`},
	})
}

// TestComponentDifferentialHTTP runs the net component's requests to a
// loopback server through mcphost and through the reference host, whose
// wasi:http is Node's fetch: a body, a status, and a port nobody listens
// on.
func TestComponentDifferentialHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/hello" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "hello %s from %s", r.URL.Query().Get("who"), r.Method)
	}))
	defer srv.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	get := func(url string, timeout int) componentCase {
		return componentCase{"get", fmt.Sprintf(`{"url":%q,"connect-timeout-ms":%d,"first-byte-timeout-ms":%d,"between-bytes-timeout-ms":%d}`, url, timeout, timeout, timeout)}
	}
	diffComponent(t, "net", Limits{Instances: 1, AllowedHosts: []string{"127.0.0.1"}}, []componentCase{
		get(srv.URL+"/hello?who=w%C3%B6rld", 0),
		get(srv.URL+"/hello?who=x", 5000),
		get(srv.URL+"/missing", 0),
		get(closed+"/", 0),
	})
}

type componentCase struct{ tool, args string }

// diffComponent calls the component name with each case through mcphost
// (limited by lim) and through the reference host, and wants the same
// results.
func diffComponent(t *testing.T, name string, lim Limits, cases []componentCase) {
	wasm := componentWasm(t, name)
	ref := filepath.Join(componentDir(), name+"-js", name+".js")
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(ref); err != nil || serr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("node or %s missing (CI=true: scripts/components.sh should have made it)", ref)
		}
		t.Skipf("skipping: node or %s missing; run scripts/components.sh", ref)
	}
	var in bytes.Buffer
	for _, c := range cases {
		in.WriteString(`{"tool":"` + c.tool + `","args":` + c.args + "}\n")
	}
	cmd := exec.Command(node, filepath.Join("internal", "component", "testdata", "differential.mjs"), ref)
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	want := bufio.NewScanner(bytes.NewReader(out))

	m, err := testEngine.Load(context.Background(), name, wasm, lim)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	for _, c := range cases {
		if !want.Scan() {
			t.Fatalf("node gave fewer results than cases\n%s", stderr.String())
		}
		res, err := componentCall(t, m, c.tool, c.args)
		if err != nil {
			t.Errorf("%s(%s): %v", c.tool, c.args, err)
			continue
		}
		var got string
		if res.IsError {
			got = `{"err":` + mustJSON(res.Content[0].Text) + `}`
		} else {
			var sc map[string]json.RawMessage
			json.Unmarshal(res.StructuredContent, &sc)
			v, ok := sc["result"]
			if !ok || c.tool == "echo-point" {
				v = res.StructuredContent
			}
			got = `{"ok":` + string(v) + `}`
		}
		if g, w := canonical(t, got), canonical(t, want.Text()); g != w {
			t.Errorf("%s(%s):\n mcphost %s\n    node %s", c.tool, c.args, g, w)
		}
	}
}

// canonical re-encodes JSON with sorted keys and exact numbers.
func canonical(t *testing.T, s string) string {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	b, _ := json.Marshal(floats(v))
	return string(b)
}

// floats turns non-integer numbers into float64s, so that 1e300 and
// 1e+300 compare equal.
func floats(v any) any {
	switch x := v.(type) {
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			f, _ := x.Float64()
			return f
		}
	case []any:
		for i := range x {
			x[i] = floats(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = floats(x[k])
		}
	}
	return v
}
