package main

import (
	"slices"
	"strings"
	"testing"
)

// TestReloadEmptySave saves plugins.toml as many editors do, truncate and
// then write, with the real watcher of a real `mcphost serve`: the reload
// that sees the empty file keeps the plugins listed and tells the client
// and the log why; the one that sees the content again changes nothing.
func TestReloadEmptySave(t *testing.T) {
	e := startReload(t)
	e.write(t, "a.wasm", wasmPlugin("a1", []string{"x"}, nil, nil))
	conf := []byte(reloadHeader + "\n[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n")
	e.replace(t, "plugins.toml", conf)
	e.expect(t, "a plugin added", "tools/list_changed")

	e.write(t, "plugins.toml", nil)
	e.expect(t, "plugins.toml truncated", "message error: the file is empty")
	if got, want := e.tools(t), []string{"a_x"}; !slices.Equal(got, want) {
		t.Errorf("tools with plugins.toml empty: got %q; want %q (unchanged)", got, want)
	}
	e.write(t, "plugins.toml", conf)
	e.barrier(t) // the save's own reload changed nothing: no notification came before the barrier's
	if got, want := e.tools(t), []string{"a_x", "barrier1_b"}; !slices.Equal(got, want) {
		t.Errorf("tools after the save: got %q; want %q", got, want)
	}
	if logs, want := e.stderr(), `msg="reload failed" gen=2 trigger=[`+e.conf+`] err="`+e.conf+`: the file is empty (0 bytes)`; !strings.Contains(logs, want) {
		t.Errorf("stderr lacks %q:\n%s", want, logs)
	}
}
