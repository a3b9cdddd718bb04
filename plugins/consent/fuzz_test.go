package consent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzGrantsFile reads arbitrary bytes as plugins.grants.toml: a file
// that reads holds only grants that are whole (a plugin, one target, a
// valid access and code), and writing them back reads back the same.
func FuzzGrantsFile(f *testing.F) {
	f.Add([]byte("[[grant]]\nplugin = \"fetch\"\ncode = \"sha256:" + strings.Repeat("0", 64) + "\"\nsigner = \"key sha256:ab\"\nhost = \"a.example:443\"\ngranted = 2026-11-25T12:00:00Z\n"))
	f.Add([]byte("[[grant]]\nplugin = \"files\"\npath = \"/srv\"\naccess = \"write\"\ngranted = 2026-11-25T12:00:00Z\n"))
	f.Add([]byte("[[grant]]\nplugin = \"x\"\nhost = \"h:1\"\ncode = \"sha256:XYZ\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		file := filepath.Join(dir, GrantsFileName)
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
		list, err := readGrants(file)
		if err != nil {
			return
		}
		for _, gr := range list {
			if gr.Plugin == "" || (gr.Host == "") == (gr.Path == "") || gr.Code != "" && !validDigest(gr.Code) ||
				gr.Path != "" && gr.Access != AccessRead && gr.Access != AccessWrite {
				t.Fatalf("read a grant that is not whole: %+v", gr)
			}
		}
		if err := writeGrants(file, list); err != nil {
			t.Fatal(err)
		}
		again, err := readGrants(file)
		if err != nil {
			t.Fatalf("what was written does not read: %v", err)
		}
		sortGrants(list)
		if len(again) != len(list) {
			t.Fatalf("wrote %d grants, read back %d", len(list), len(again))
		}
		for i := range list {
			if list[i].Plugin != again[i].Plugin || list[i].Target() != again[i].Target() || list[i].Code != again[i].Code ||
				list[i].Signer != again[i].Signer || list[i].Access != again[i].Access || !list[i].Granted.Equal(again[i].Granted) {
				t.Fatalf("grant %d: wrote %+v, read back %+v", i, list[i], again[i])
			}
		}
	})
}
