package source

import (
	"archive/tar"
	"bytes"
	"strings"
	"testing"
)

func TestParseOCIRef(t *testing.T) {
	digest := "sha256:" + strings.Repeat("0a", 32)
	tests := []struct {
		ref  string
		want string // "" means valid; else a piece of the error
	}{
		{"ghcr.io/owner/plugin:v1@" + digest, ""},
		{"ghcr.io/owner/plugin@" + digest, ""},
		{"127.0.0.1:5000/p:v1@" + digest, ""},
		{"localhost/p@" + digest, ""},
		{"ghcr.io/owner/plugin:v1", "no digest"},
		{"oci://ghcr.io/owner/plugin:v1@" + digest, "without a scheme"},
		{"owner/plugin:v1@" + digest, "names no registry"},
		{"plugin@" + digest, "names no registry"},
		{"ghcr.io/owner/plugin@sha256:abc", "digest"},
		{"ghcr.io/owner/plugin@sha512:" + strings.Repeat("0a", 64), "sha256"},
		{"ghcr.io/Owner/plugin@" + digest, "repository"},
		{"", "no digest"},
	}
	for _, tt := range tests {
		_, err := ParseOCIRef(tt.ref)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("ParseOCIRef(%q): got %v; want no error", tt.ref, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("ParseOCIRef(%q): got %v; want an error mentioning %q", tt.ref, err, tt.want)
		}
	}
}

func TestWasmFromTar(t *testing.T) {
	tests := []struct {
		name  string
		files map[string][]byte
		want  string
		err   string
	}{
		{"plugin.wasm wins", map[string][]byte{"a.wasm": []byte("A"), "plugin.wasm": []byte("P")}, "P", ""},
		{"the only wasm", map[string][]byte{"README": []byte("x"), "a.wasm": []byte("A")}, "A", ""},
		{"two without plugin.wasm", map[string][]byte{"a.wasm": []byte("A"), "b.wasm": []byte("B")}, "", "several .wasm files"},
		{"none", map[string][]byte{"README": []byte("x")}, "", ""},
	}
	for _, tt := range tests {
		got, err := wasmFromTar(bytes.NewReader(tarOf(t, tt.files)))
		if string(got) != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("%s: got %q, %v; want %q, error %q", tt.name, got, err, tt.want, tt.err)
		}
	}
}

func FuzzParseOCIRef(f *testing.F) {
	f.Add("ghcr.io/owner/plugin:v1@sha256:" + strings.Repeat("0a", 32))
	f.Add("localhost:5000/a/b/c@sha256:" + strings.Repeat("ff", 32))
	f.Add("oci://x@y")
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseOCIRef(s)
		if err != nil {
			return
		}
		if !strings.HasPrefix(d.DigestStr(), "sha256:") || len(d.DigestStr()) != 71 {
			t.Errorf("ParseOCIRef(%q) accepted digest %q", s, d.DigestStr())
		}
		if _, err := ParseOCIRef(d.String()); err != nil {
			t.Errorf("ParseOCIRef(%q) = %q, which does not parse again: %v", s, d.String(), err)
		}
	})
}

func FuzzWasmFromTar(f *testing.F) {
	f.Add(tarOf(f, map[string][]byte{"plugin.wasm": []byte("\x00asm")}))
	f.Add(tarOf(f, map[string][]byte{"a.wasm": []byte("A"), "b.wasm": []byte("B")}))
	f.Add([]byte("not a tar"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := wasmFromTar(bytes.NewReader(b))
		if err != nil && got != nil {
			t.Errorf("got %d bytes and error %v; want one or the other", len(got), err)
		}
		if len(got) > maxDownload {
			t.Errorf("got %d bytes; want at most %d", len(got), maxDownload)
		}
	})
}
func tarOf(t testing.TB, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range []string{"README", "plugin.wasm", "a.wasm", "b.wasm"} {
		b, ok := files[n]
		if !ok {
			continue
		}
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(b)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
