package core

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
	"github.com/mcphost/mcphost/internal/wasmgen"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// readOnlyPlugin lists a read-only tool, a writing one and one without
// annotations; every tool answers "ran".
func readOnlyPlugin() []byte {
	return wasmgen.Module(
		wasmgen.Func{Name: abi.ExportListTools, Output: `{"tools":[` +
			`{"name":"get","description":"reads","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},` +
			`{"name":"put","description":"writes","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":false}},` +
			`{"name":"plain","description":"says nothing","inputSchema":{"type":"object"}}]}`},
		wasmgen.Func{Name: abi.ExportCallTool, Output: `{"content":[{"type":"text","text":"ran"}]}`},
	)
}

const readOnlyPlugins = "\n[[plugin]]\nname = \"a\"\npath = \"ro.wasm\"\nread_only = true\n" +
	"\n[[plugin]]\nname = \"b\"\npath = \"ro.wasm\"\n"

// TestReadOnlyEras drives mcphost serve with the official Go SDK client,
// in both eras, over stdio and HTTP: a read_only plugin lists and runs
// only its read-only tool, its others are unknown tools (the log names
// the filter), and turning [server] read_only on in a reload applies it
// to the other plugin too.
func TestReadOnlyEras(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mcphost serve")
	}
	eachEra(t, func(t *testing.T, connect connectFunc) {
		dir := t.TempDir()
		conf := filepath.Join(dir, "plugins.toml")
		writeTestFile(t, filepath.Join(dir, "ro.wasm"), readOnlyPlugin())
		writeTestFile(t, conf, []byte("[server]\nname = \"ro\"\n"+readOnlyPlugins))
		changed := make(chan struct{}, 16)
		client := mcp.NewClient(&mcp.Implementation{Name: "read-only", Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
		})
		cs, stderr := connect(client, "--config", conf)
		ctx := context.Background()
		if got, want := listToolNames(t, cs), []string{"a_get", "b_get", "b_plain", "b_put"}; !slices.Equal(got, want) {
			t.Fatalf("tools/list = %q; want %q", got, want)
		}
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "a_get"}); err != nil || systest.TextOf(t, res) != "ran" {
			t.Errorf("a_get: %v %+v; want it to run", err, res)
		}
		for _, name := range []string{"a_put", "a_plain"} {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name})
			if err == nil || !strings.Contains(err.Error(), "unknown tool: "+name) {
				t.Errorf("%s: %v %+v; want an unknown tool error", name, err, res)
			}
		}
		if stderr != nil { // the log line is written before the answer; the pipe may lag
			wctx, cancel := context.WithTimeout(ctx, systest.NoteTimeout)
			defer cancel()
			systest.WaitFor(t, wctx, "the log naming the read_only filter that hid a_put", func() bool {
				return strings.Contains(stderr(), "tool=a_put plugin=a filter=read_only")
			})
		}

		// [server] read_only = true in a reload: b keeps only its get too.
		writeTestFile(t, conf, []byte("[server]\nname = \"ro\"\nread_only = true\n"+readOnlyPlugins))
		want := []string{"a_get", "b_get"}
		deadline := time.After(systest.NoteTimeout)
		for got := listToolNames(t, cs); !slices.Equal(got, want); got = listToolNames(t, cs) {
			select {
			case <-changed:
			case <-deadline:
				t.Fatalf("after the reload: tools/list = %q; want %q", got, want)
			}
		}
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "b_put"}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
			t.Errorf("b_put after the reload: %v; want an unknown tool error", err)
		}
	})
}

// TestValidateShowsHidden: validate names each hidden tool and its filter.
func TestValidateShowsHidden(t *testing.T) {
	if testing.Short() {
		t.Skip("runs mcphost validate")
	}
	dir := t.TempDir()
	conf := filepath.Join(dir, "plugins.toml")
	writeTestFile(t, filepath.Join(dir, "ro.wasm"), readOnlyPlugin())
	writeTestFile(t, conf, []byte("[server]\nname = \"ro\"\n"+readOnlyPlugins+"exclude_tools = [\"plain\"]\n"))
	// A process of its own: in this one, two plugins compiling at once
	// race in wazero's version lookup (GetWazeroVersion) under -race.
	var out, errb bytes.Buffer
	cmd := exec.Command(systest.Binary(t), "validate", "--config", conf)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("validate: %v\n%s", err, errb.String())
	}
	for _, line := range []string{"hidden    a_put                            by read_only",
		"hidden    a_plain                          by read_only", "hidden    b_plain                          by exclude_tools",
		"tool      b_put "} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("validate output lacks %q:\n%s", line, out.String())
		}
	}
	out.Reset()
	cmd = exec.Command(systest.Binary(t), "validate", "--json", "--config", conf)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("validate --json: %v\n%s", err, errb.String())
	}
	var rep struct {
		Plugins []struct {
			Name   string
			Hidden []struct{ Original, Name, Filter string }
		}
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Plugins) != 2 {
		t.Fatalf("validate --json: %v\n%s", err, out.String())
	}
	var hidden []string
	for _, p := range rep.Plugins {
		for _, h := range p.Hidden {
			hidden = append(hidden, p.Name+":"+h.Original+"="+h.Name+"@"+h.Filter)
		}
	}
	if want := []string{"a:put=a_put@read_only", "a:plain=a_plain@read_only", "b:plain=b_plain@exclude_tools"}; !slices.Equal(hidden, want) {
		t.Errorf("validate --json hidden = %q; want %q", hidden, want)
	}
}

// connectFunc connects client to `mcphost serve args…`; stderr returns
// what the server logged so far (nil over HTTP, where it is not kept).
type connectFunc func(client *mcp.Client, args ...string) (cs *mcp.ClientSession, stderr func() string)

// eachEra runs f in both eras, over stdio and over HTTP.
func eachEra(t *testing.T, f func(t *testing.T, connect connectFunc)) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		for _, transport := range []string{"stdio", "http"} {
			t.Run(version+"/"+transport, func(t *testing.T) {
				f(t, func(client *mcp.Client, args ...string) (*mcp.ClientSession, func() string) {
					if transport == "http" {
						return systest.ConnectHTTP(t, client, version, args...), nil
					}
					s := systest.StartServerEra(t, client, version, args...)
					lw := s.Cmd.Stderr.(*systest.LockedWriter)
					return s.Session, func() string {
						lw.Mu.Lock()
						defer lw.Mu.Unlock()
						return s.Stderr.String()
					}
				})
			})
		}
	}
}

func listToolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	var names []string
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		names = append(names, tool.Name)
	}
	return names
}

func writeTestFile(t *testing.T, file string, data []byte) {
	t.Helper()
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
