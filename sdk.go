// Package mcphost carries the source of the guest SDK inside every binary
// that imports it, so that Go-source plugins build in any directory,
// offline, whether or not the module is published.
//
// It lives at the module root because //go:embed reaches only files at or
// below the embedding package: the files are the repository's own abi/
// and sdk-guest/ sources, not a generated copy. It owns nothing but that
// list of files; plugins/source extracts and wires them into builds.
package mcphost

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
)

// ModulePath is the module the SDK's packages belong to.
const ModulePath = "github.com/mcphost/mcphost"

// sdkGoMod is the SDK module's go.mod: a language version only, so that no
// toolchain download is ever needed, and no requirements (the SDK uses the
// standard library alone).
const sdkGoMod = "module " + ModulePath + "\n\ngo 1.26\n"

// The patterns name the packages plugin authors import and what they
// import in turn. sdk-guest's kits and internal packages are left out:
// the kits are not Go, and internal/wasmrun needs the Extism SDK.
//
//go:embed abi sdk-guest/*.go sdk-guest/guesttest/*.go sdk-guest/stateless/*.go
var sdkTree embed.FS

var sdk = sync.OnceValues(func() (map[string][]byte, string) {
	files := map[string][]byte{"go.mod": []byte(sdkGoMod)}
	err := fs.WalkDir(sdkTree, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".go" || strings.HasSuffix(p, "_test.go") || strings.Contains("/"+p, "/testdata/") {
			return err
		}
		data, err := sdkTree.ReadFile(p)
		files[p] = data
		return err
	})
	if err != nil {
		panic("mcphost: embedded SDK: " + err.Error()) // the embed.FS is part of the binary
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		h.Write([]byte(n + "\x00"))
		h.Write(files[n])
		h.Write([]byte{0})
	}
	return files, hex.EncodeToString(h.Sum(nil))
})

// SDKFiles returns the SDK module's files by slash-separated path relative
// to the module root: go.mod, abi/abi.go, sdk-guest/guest.go, … (non-test
// Go files only). The map is shared: callers must not modify it.
func SDKFiles() map[string][]byte {
	files, _ := sdk()
	return files
}

// SDKHash identifies this SDK's source: the SHA-256 (hex) of its file
// names and contents.
func SDKHash() string {
	_, h := sdk()
	return h
}
