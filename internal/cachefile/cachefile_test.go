package cachefile

import (
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	entry := filepath.Join(dir, "e.wasm")
	data := []byte("\x00asm\x01\x00\x00\x00")
	tests := []struct {
		name    string
		setup   func(t *testing.T)
		corrupt bool
	}{
		{"recorded", func(t *testing.T) {
			if err := Record(entry, Sum(data)); err != nil {
				t.Fatal(err)
			}
			if err := WriteFile(entry, data); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"changed", func(t *testing.T) {
			if err := os.WriteFile(entry, data[:4], 0o600); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"no record", func(t *testing.T) {
			if err := os.Remove(SumFile(entry)); err != nil {
				t.Fatal(err)
			}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.setup(t)
			err := Verify(entry)
			var ce *CorruptError
			if got := errors.As(err, &ce); got != tt.corrupt || (err != nil && !tt.corrupt) {
				t.Errorf("Verify: %v; want corrupt %v", err, tt.corrupt)
			}
			if ce != nil && ce.File != entry {
				t.Errorf("CorruptError.File = %q; want %q", ce.File, entry)
			}
		})
	}
	if err := Remove(entry); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("after Remove: %v left; want nothing, no temporary files either", left)
	}
}

// BenchmarkVerify measures what checking a cache entry costs: the
// SHA-256 of a 16 MiB entry (a Go guest's compiled code), against the
// CRC-32C wazero computes over the same bytes, run alternately in the
// same loop; it reports both and their ratio.
func BenchmarkVerify(b *testing.B) {
	data := make([]byte, 16<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	table := crc32.MakeTable(crc32.Castagnoli)
	var sha, crc time.Duration
	b.ReportAllocs()
	for b.Loop() {
		start := time.Now()
		Sum(data)
		mid := time.Now()
		crc32.Checksum(data, table)
		sha, crc = sha+mid.Sub(start), crc+time.Since(mid)
	}
	n := float64(b.N)
	b.ReportMetric(float64(sha)/1e6/n, "sha256-ms/16MiB")
	b.ReportMetric(float64(crc)/1e6/n, "crc32c-ms/16MiB")
	b.ReportMetric(float64(sha)/float64(crc), "sha256/crc32c")
}
