package guestmem

// heapMemory is wazero's own kind of memory, in the Go heap, for where a
// reservation is not available: it grows by copying.
type heapMemory struct{ buf []byte }

func (m *heapMemory) Reallocate(size uint64) []byte {
	if n := uint64(len(m.buf)); size > n {
		m.buf = append(m.buf, make([]byte, size-n)...)
	}
	return m.buf[:size]
}

func (m *heapMemory) Free() { m.buf = nil }
