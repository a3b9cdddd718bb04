package jsonrpc

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
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
			r := NewLineReader(strings.NewReader(tt.in), tt.max)
			var got []string
			for {
				line, err := r.Next()
				var tl *TooLargeError
				switch {
				case errors.As(err, &tl):
					got = append(got, fmt.Sprintf("!%d", tl.N))
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
	r := NewLineReader(strings.NewReader(in), 200_000)
	_, err := r.Next()
	var tl *TooLargeError
	if !errors.As(err, &tl) {
		t.Fatalf("got %v; want a *TooLargeError", err)
	}
	if got := string(PeekID(tl.Head)); got != `"big"` || len(tl.Head) != PeekBytes {
		t.Errorf("got id %s from %d bytes; want \"big\" from %d", got, len(tl.Head), PeekBytes)
	}
}

// Ready is true only when Next can return a line without reading: a whole
// non-blank line is buffered.
func TestLineReaderReady(t *testing.T) {
	tests := []struct {
		name, first, rest string // rest is what the reader holds after the first Next
		ready             bool
	}{
		{"nothing more", "a\n", "", false},
		{"a partial line", "a\n", "{\"x\":", false},
		{"blank lines only", "a\n", "\n \r\n\t\n", false},
		{"a whole line", "a\n", "b\n", true},
		{"a line after blank ones", "a\n", "\n  \nb\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewLineReader(strings.NewReader(tt.first+tt.rest), 100)
			if _, err := r.Next(); err != nil {
				t.Fatal(err)
			}
			if got := r.Ready(); got != tt.ready {
				t.Errorf("Ready() = %v; want %v", got, tt.ready)
			}
		})
	}
}
