package host

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/host/jsonrpc"
	"github.com/mcphost/mcphost/plugins"
)

func TestLineReader(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name string
		in   string
		max  int64
		want []string // a line, or "!N" for a line of N bytes over the limit
	}{
		{"lines", "a\nb\r\n\n  \nc", 10, []string{"a", "b", "c"}},
		{"at the limit", long(10) + "\n" + long(11) + "\nok\n", 10, []string{long(10), "!11", "ok"}},
		{"crlf at the limit", long(10) + "\r\nok\n", 10, []string{long(10), "ok"}},
		{"longer than the buffer, within the limit", long(100_000) + "\nok\n", 200_000, []string{long(100_000), "ok"}},
		{"longer than the buffer and the limit", long(300_000) + "\nok\n", 200_000, []string{"!300000", "ok"}},
		{"over the limit at EOF", long(300_000), 200_000, []string{"!300000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := lineReader{br: bufio.NewReaderSize(strings.NewReader(tt.in), 64<<10), max: tt.max}
			var got []string
			for {
				line, err := r.next()
				var tl *tooLargeError
				switch {
				case errors.As(err, &tl):
					got = append(got, fmt.Sprintf("!%d", tl.n))
					continue
				case len(line) > 0:
					got = append(got, string(line))
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d lines; want %d", len(got), len(tt.want))
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("line %d: got %.20q (%d bytes); want %.20q (%d bytes)", i, got[i], len(got[i]), tt.want[i], len(tt.want[i]))
				}
			}
		})
	}
}

// TestLineReaderHead: an oversize line longer than the reader's buffer
// still yields its first bytes, so its id can be answered.
func TestLineReaderHead(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":"big","params":"` + strings.Repeat("x", 300_000) + "\"}\nok\n"
	r := lineReader{br: bufio.NewReaderSize(strings.NewReader(in), 64<<10), max: 200_000}
	_, err := r.next()
	var tl *tooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("got %v; want a tooLargeError", err)
	}
	if got := string(jsonrpc.PeekID(tl.head)); got != `"big"` || len(tl.head) != jsonrpc.PeekBytes {
		t.Errorf("got id %s from %d bytes; want \"big\" from %d", got, len(tl.head), jsonrpc.PeekBytes)
	}
}

// failingWriter fails every write, like a stdout whose reader went away.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestWriteFailureEndsSession(t *testing.T) {
	srv := newServer(t, newFixture(), Options{})
	inR, inW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(t.Context(), inR, failingWriter{}) }()
	fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	err := recv(t, done, "ServeStdio to return")
	if err == nil || !strings.Contains(err.Error(), "broken pipe") {
		t.Fatalf("ServeStdio: got %v; want the write error", err)
	}
	inW.Close()
}

// After stdin closes, requests still waiting for the initial load get the
// rest of the startup wait on top of drainGrace; once loaded, only drainGrace.
func TestDrainTimeCoversStartupWait(t *testing.T) {
	reg := plugins.NewRegistry()
	srv := New(reg, Options{Logger: quietLog, StartupWait: time.Hour})
	t.Cleanup(srv.Close)
	if got := srv.drainTime(); got < 59*time.Minute {
		t.Errorf("drainTime before the initial load = %v; want about an hour more than %v", got, drainGrace)
	}
	g, err := plugins.NewLoader(plugins.LoaderOptions{Logger: quietLog}).Build(context.Background(), plugins.DefaultConfig(), nil)
	if err != nil {
		t.Fatal(err)
	}
	reg.Swap(context.Background(), g)
	if got := srv.drainTime(); got != drainGrace {
		t.Errorf("drainTime after the initial load = %v; want %v", got, drainGrace)
	}
}
