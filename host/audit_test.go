package host

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestAuditLog(t *testing.T) {
	var audit lockedBuffer
	srv := newServer(t, newFixture(), Options{Audit: &audit})
	in := []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`not json`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_echo","arguments":{"msg":"audited"}}}`,
	}
	out := runLines(t, srv, in)
	outLines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")

	type entry struct {
		Time    string          `json:"time"`
		Dir     string          `json:"dir"`
		Session string          `json:"session"`
		Msg     json.RawMessage `json:"msg"`
	}
	var got []entry
	for _, line := range bytes.Split(bytes.TrimSuffix(audit.Bytes(), []byte("\n")), []byte("\n")) {
		var e entry
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("audit line %q is not JSON: %v", line, err)
		}
		if _, err := time.Parse(time.RFC3339Nano, e.Time); err != nil {
			t.Errorf("audit time %q: %v", e.Time, err)
		}
		got = append(got, e)
	}
	// Every message in and out, in order: in, out, in (bad), out (-32700),
	// in (notification), in, out.
	wantDirs := []string{"in", "out", "in", "out", "in", "in", "out"}
	if len(got) != len(wantDirs) {
		t.Fatalf("got %d audit entries; want %d:\n%s", len(got), len(wantDirs), audit.Bytes())
	}
	ins, outs := 0, 0
	for i, e := range got {
		if e.Dir != wantDirs[i] || e.Session != got[0].Session || e.Session == "" {
			t.Errorf("entry %d: got dir %q session %q; want dir %q and one non-empty session", i, e.Dir, e.Session, wantDirs[i])
		}
		var want string
		if e.Dir == "in" {
			want, ins = in[ins], ins+1
		} else {
			want, outs = outLines[outs], outs+1
		}
		if want == "not json" {
			want = `"not json"` // recorded as a JSON string
		}
		if string(e.Msg) != want {
			t.Errorf("entry %d: got msg %s; want %s", i, e.Msg, want)
		}
	}
}
