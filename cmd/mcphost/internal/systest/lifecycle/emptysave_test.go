package lifecycle

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
)

// TestReloadEmptySave saves plugins.toml as many editors do, truncate and
// then write, with the real watcher of a real `mcphost serve`: the reload
// that sees the empty file keeps the plugins listed and tells the client
// and the log why; the one that sees the content again changes nothing.
func TestReloadEmptySave(t *testing.T) {
	e := systest.StartReload(t)
	e.Write(t, "a.wasm", systest.WasmPlugin("a1", []string{"x"}, nil, nil))
	conf := []byte(systest.ReloadHeader + "\n[[plugin]]\nname = \"a\"\npath = \"a.wasm\"\n")
	e.Replace(t, "plugins.toml", conf)
	e.Expect(t, "a plugin added", "tools/list_changed")

	e.Write(t, "plugins.toml", nil)
	e.Expect(t, "plugins.toml truncated", "message error: the file is empty")
	if got, want := e.Tools(t), []string{"a_x"}; !slices.Equal(got, want) {
		t.Errorf("tools with plugins.toml empty: got %q; want %q (unchanged)", got, want)
	}
	e.Write(t, "plugins.toml", conf)
	e.Barrier(t) // the save's own reload changed nothing: no notification came before the barrier's
	if got, want := e.Tools(t), []string{"a_x", "barrier1_b"}; !slices.Equal(got, want) {
		t.Errorf("tools after the save: got %q; want %q", got, want)
	}
	if logs, want := e.Stderr(), `msg="reload failed" gen=2 trigger=[`+e.Conf+`] err="`+e.Conf+`: the file is empty (0 bytes)`; !strings.Contains(logs, want) {
		t.Errorf("stderr lacks %q:\n%s", want, logs)
	}
}
