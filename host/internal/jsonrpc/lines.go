package jsonrpc

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"

	"github.com/mcphost/mcphost/abi/jsonscan"
)

// Framing of newline-delimited JSON, as stdio carries it.

// TooLargeError reports a line of N bytes over a LineReader's limit.
type TooLargeError struct {
	N int64
	// Head is a copy of the line's first bytes (at most PeekBytes), to
	// look for its id with PeekID.
	Head []byte
}

func (e *TooLargeError) Error() string { return fmt.Sprintf("message of %d bytes too large", e.N) }

// LineReader splits newline-delimited JSON into lines of at most a limit
// of bytes, with memory bounded by that limit whatever the input.
type LineReader struct {
	br  *bufio.Reader
	max int64
	buf []byte
}

// NewLineReader returns a LineReader of r for lines of at most max bytes
// (without their end of line).
func NewLineReader(r io.Reader, max int64) *LineReader {
	return &LineReader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Next returns the next line, without its end of line, as a fresh copy
// (the session keeps it). Blank lines are skipped. A line over the limit is
// read to its end and discarded (memory stays bounded) and reported as a
// *TooLargeError. The last line may lack its newline. At the end of the
// input it returns io.EOF, possibly with a last line.
func (r *LineReader) Next() ([]byte, error) {
	for {
		line, err := r.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return r.long(line)
		}
		line = TrimEOL(line)
		if int64(len(line)) > r.max {
			return nil, &TooLargeError{N: int64(len(line)), Head: headOf(line)}
		}
		if jsonscan.SkipSpace(line, 0) < len(line) {
			return append([]byte(nil), line...), err
		}
		if err != nil {
			return nil, err
		}
	}
}

// Ready reports whether a whole non-blank line is buffered already, so
// that Next will return without reading (and so without blocking).
func (r *LineReader) Ready() bool {
	b, _ := r.br.Peek(r.br.Buffered())
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return false
		}
		if jsonscan.SkipSpace(b[:i], 0) < i {
			return true
		}
		b = b[i+1:]
	}
}

// long assembles a line longer than the reader's buffer.
func (r *LineReader) long(first []byte) ([]byte, error) {
	buf := append(r.buf[:0], first...)
	var err error
	for {
		var part []byte
		part, err = r.br.ReadSlice('\n')
		if int64(len(buf)+len(part)) > r.max+2 { // +2: room for "\r\n"
			n := int64(len(buf) + len(part))
			head := headOf(append(buf, part...))
			for err == bufio.ErrBufferFull {
				part, err = r.br.ReadSlice('\n')
				n += int64(len(part))
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
			return nil, &TooLargeError{N: n - int64(len(part)-len(TrimEOL(part))), Head: head}
		}
		if cap(buf)-len(buf) < len(part) {
			// Double: append grows large slices by 1.25×, which copies a
			// multi-megabyte line about five times over.
			buf = slices.Grow(buf, max(len(part), len(buf)))
		}
		buf = append(buf, part...)
		if err != bufio.ErrBufferFull {
			break
		}
	}
	keep := cap(buf) <= 1<<20
	r.buf = nil
	if keep {
		r.buf = buf[:0]
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	line := TrimEOL(buf)
	if int64(len(line)) > r.max {
		return nil, &TooLargeError{N: int64(len(line)), Head: headOf(line)}
	}
	if !keep {
		return line, err // the reader lets go of buf: no copy
	}
	return append([]byte(nil), line...), err
}

// headOf copies the first PeekBytes of line.
func headOf(line []byte) []byte {
	return append([]byte(nil), line[:min(len(line), PeekBytes)]...)
}
