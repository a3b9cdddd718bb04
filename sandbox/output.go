package sandbox

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
)

const (
	maxLineBytes = 4 << 10 // longer lines are logged in pieces
	tailBytes    = 2 << 10 // stderr kept for CallError.Detail
	maxNotable   = 4
)

// lineWriter receives one guest stream (WASI stdout or stderr) of one
// instance. It logs whole lines and, for stderr, keeps the tail of what the
// current call wrote. It never writes anywhere else: in stdio mode the
// process's stdout belongs to the protocol.
type lineWriter struct {
	log   *slog.Logger // already carries plugin and stream
	keep  bool         // keep a tail for Detail (stderr)
	mu    sync.Mutex
	line  []byte
	tail  []byte   // last tailBytes bytes written during the current call
	noted []string // lines that explain a crash, e.g. "panic: …"
}

func newLineWriter(log *slog.Logger, stream string, keep bool) *lineWriter {
	return &lineWriter{log: log.With("stream", stream), keep: keep}
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	if w.keep {
		w.tail = append(w.tail, p...)
		if len(w.tail) > tailBytes {
			w.tail = append(w.tail[:0], w.tail[len(w.tail)-tailBytes:]...)
		}
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			room := maxLineBytes - len(w.line)
			if len(p) < room {
				w.line = append(w.line, p...)
				break
			}
			w.line = append(w.line, p[:room]...)
			p = p[room:]
			w.emit()
			continue
		}
		w.line = append(w.line, p[:i]...)
		p = p[i+1:]
		w.emit()
	}
	return n, nil
}

// emit logs the pending line. The caller holds mu.
func (w *lineWriter) emit() {
	s := strings.TrimRight(string(w.line), "\r")
	w.line = w.line[:0]
	if w.keep && len(w.noted) < maxNotable && notable(s) {
		w.noted = append(w.noted, s)
	}
	w.log.LogAttrs(context.Background(), slog.LevelInfo, "guest output", slog.String("line", s))
}

// notable reports whether a stderr line explains a crash.
func notable(s string) bool {
	return strings.HasPrefix(s, "panic: ") || strings.HasPrefix(s, "fatal error: ") ||
		strings.Contains(s, "out of memory") || strings.HasPrefix(s, "runtime: ")
}

// reset starts a new call: it flushes a partial line and forgets the tail.
func (w *lineWriter) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.line) > 0 {
		w.emit()
	}
	w.tail = w.tail[:0]
	w.noted = w.noted[:0]
}

// summary returns what the current call wrote, as one line: the notable
// lines if any, otherwise the last few lines of the tail.
func (w *lineWriter) summary() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.line) > 0 {
		w.emit()
	}
	if len(w.noted) > 0 {
		return strings.Join(w.noted, " | ")
	}
	var lines []string
	for _, l := range strings.Split(string(w.tail), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.Join(lines, " | ")
}

// outOfMemory reports whether the current call's stderr says the guest ran
// out of memory (Go: "fatal error: out of memory", Rust: "memory
// allocation of N bytes failed").
func (w *lineWriter) outOfMemory() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	t := string(w.tail) + string(w.line)
	for _, s := range w.noted {
		t += "\n" + s
	}
	return strings.Contains(t, "out of memory") || strings.Contains(t, "memory allocation of")
}
