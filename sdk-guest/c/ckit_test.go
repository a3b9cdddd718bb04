package ckit

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk-guest/internal/wasmrun"
)

// TestJSONHelpers compiles testdata/json_test.c natively and runs it: the
// JSON reader and writer of mcphost.h need no Wasm to be tested. Without
// clang it skips, except in CI (CI=true), where scripts/kit-deps.sh
// installs it.
func TestJSONHelpers(t *testing.T) {
	clang, err := exec.LookPath("clang")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("clang is not installed (CI=true: scripts/kit-deps.sh should have installed it)")
		}
		t.Skip("skipping: clang is not installed; run scripts/kit-deps.sh")
	}
	bin := filepath.Join(t.TempDir(), "json_test")
	if out, err := exec.Command(clang, "-std=c11", "-O1", "-Wall", "-Wextra", "-Werror",
		"-Wno-unknown-attributes", "-Wno-ignored-attributes", "-o", bin, "testdata/json_test.c").CombinedOutput(); err != nil {
		t.Fatalf("clang: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") {
		t.Errorf("json_test: %v\n%s", err, out)
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, "demo"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"plugin.c", "mcphost.h", "build.sh", "plugins.toml", "README.md"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if strings.Contains(string(b), "{{") && f != "mcphost.h" {
			t.Errorf("%s: holds an unrendered placeholder", f)
		}
	}
}

// TestTemplateOnExtism builds the template as mcphost serves it
// (importing mcphost's bulk copies), with -DMCP_EXTISM_ONLY, and declared
// stateless (MCP_STATELESS), and runs each on Extism's go-sdk, whose stubs of the bulk copies answer "not
// supported" (wasmrun): the first takes the 8-byte path after asking, the
// second never names the import, so a plain Extism host instantiates it.
// Each answers a tool call through call_tool's envelope, as hyper-mcp
// asks, and the same bytes through the call frame, as mcphost asks.
// mcphost's own bulk path is run by TestKitTemplates and TestCKitKV in
// cmd/mcphost/internal/systest/kits.
func TestTemplateOnExtism(t *testing.T) {
	if _, err := exec.LookPath("clang"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("clang is not installed (CI=true: scripts/kit-deps.sh should have installed it)")
		}
		t.Skip("skipping: clang is not installed; run scripts/kit-deps.sh")
	}
	for _, tc := range []struct {
		name, cc  string
		bulk      bool // the module imports mcphost:host/io
		stateless bool // MCP_STATELESS added: it exports mcphost_stateless
	}{
		{"bulk", "clang", true, false},
		{"extism-only", "clang -DMCP_EXTISM_ONLY", false, false},
		{"stateless", "clang", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := Write(dir, "kc"); err != nil {
				t.Fatal(err)
			}
			if tc.stateless {
				f, err := os.OpenFile(filepath.Join(dir, "plugin.c"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				_, err = f.WriteString("\nMCP_STATELESS\n")
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			build := BuildCommand()
			cmd := exec.Command(build[0], build[1:]...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "CC="+tc.cc)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%v: %v\n%s", build, err, out)
			}
			path := filepath.Join(dir, "kc.wasm")
			wasm, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.Contains(wasm, []byte("mcphost:host/io")); got != tc.bulk {
				t.Fatalf("imports mcphost:host/io: %v, want %v", got, tc.bulk)
			}
			if got := bytes.Contains(wasm, []byte("mcphost_stateless")); got != tc.stateless {
				t.Errorf("exports mcphost_stateless: %v, want %v", got, tc.stateless)
			}
			p := wasmrun.Load(t, path, wasmrun.Options{})
			// A text longer than a few 8-byte words each way.
			text := strings.Repeat("one two\n", 40)
			in := `{"request":{"name":"measure","arguments":{"text":` + strconv.Quote(text) + `}},"context":{"id":1,"_meta":{}}}`
			rc, out, err := p.Call("call_tool", []byte(in))
			if err != nil || rc != 0 {
				t.Fatalf("call_tool: rc %d, err %v", rc, err)
			}
			want := fmt.Sprintf(`"structuredContent":{"bytes":%d,"words":80,"lines":40}`, len(text))
			if !strings.Contains(string(out), want) {
				t.Errorf("output %s\nwant it to hold %s", out, want)
			}
			// mcphost's door (abi.ExportCallToolFrame) answers the same
			// call with the same bytes.
			frame := abi.AppendCallFrame(nil, &abi.CallFrame{Name: []byte("measure"), ID: []byte("1"), Meta: []byte("{}"),
				Arguments: []byte(`{"text":` + strconv.Quote(text) + `}`)})
			rc, fout, err := p.Call(abi.ExportCallToolFrame, frame)
			if err != nil || rc != 0 || !bytes.Equal(fout, out) {
				t.Errorf("%s: rc %d, err %v, output %s\nwant the output of call_tool, %s", abi.ExportCallToolFrame, rc, err, fout, out)
			}
		})
	}
}
