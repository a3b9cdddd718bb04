package sdksrc

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite sdk.txtar from the repository")

// TestArchiveInSync fails when abi/, sdk-guest/ or sdk-guest/guesttest/
// changed without `go generate ./internal/sdksrc`.
func TestArchiveInSync(t *testing.T) {
	want, err := build(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("sdk.txtar", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(archive, want) {
		t.Fatal("sdk.txtar is out of date with abi/ and sdk-guest/: run go generate ./internal/sdksrc")
	}
}

func TestExtract(t *testing.T) {
	parent := t.TempDir()
	dir, err := Extract(parent)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"go.mod", "abi/abi.go", "sdk-guest/guest.go", "sdk-guest/guesttest/guesttest.go"} {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		if want := Files()[name]; !bytes.Equal(got, want) {
			t.Errorf("%s: extracted content differs from the archive", name)
		}
	}
	again, err := Extract(parent)
	if err != nil || again != dir {
		t.Errorf("second Extract = %q, %v; want %q, nil", again, err, dir)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 1 {
		t.Errorf("parent holds %d entries; want 1 (no temporary left behind)", len(ents))
	}
}

// Packages lists the directories (relative to the module root) whose
// non-test .go files make up the SDK.
var packages = [...]string{"abi", "sdk-guest", "sdk-guest/guesttest"}

// goMod is the SDK module's go.mod: a language version only, so that no
// toolchain download is ever needed, and no requirements (the SDK uses
// the standard library alone).
const goMod = "module " + ModulePath + "\n\ngo 1.26\n"

// build makes the archive from the repository at root.
func build(root string) ([]byte, error) {
	a := &txtar.Archive{Comment: []byte("Generated from the mcphost repository by `go generate ./internal/sdksrc`. DO NOT EDIT.\n")}
	a.Files = append(a.Files, txtar.File{Name: "go.mod", Data: []byte(goMod)})
	for _, pkg := range packages {
		ents, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(pkg)))
		if err != nil {
			return nil, err
		}
		for _, e := range ents {
			n := e.Name()
			if !e.Type().IsRegular() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
				continue
			}
			data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(pkg), n))
			if err != nil {
				return nil, err
			}
			if len(data) > 0 && data[len(data)-1] != '\n' {
				return nil, fmt.Errorf("%s/%s: does not end in a newline", pkg, n)
			}
			a.Files = append(a.Files, txtar.File{Name: pkg + "/" + n, Data: data})
		}
	}
	if len(a.Files) == 1 {
		return nil, errors.New("no SDK sources found")
	}
	return txtar.Format(a), nil
}

// TestExtractRepairs: a copy that lost files (its go.mod among them) to
// something outside mcphost is replaced, not trusted and not fatal.
func TestExtractRepairs(t *testing.T) {
	parent := t.TempDir()
	dir, err := Extract(parent)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatal(err)
	}
	again, err := Extract(parent)
	if err != nil || again != dir {
		t.Fatalf("Extract after damage = %q, %v; want %q, nil", again, err, dir)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "go.mod")); err != nil || !bytes.Equal(got, Files()["go.mod"]) {
		t.Errorf("go.mod after repair: %q, %v; want the archive's", got, err)
	}
}
