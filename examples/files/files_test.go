package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
	"github.com/mcphost/mcphost/sdk-guest/guesttest"
)

var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

// setup creates a served directory and a secret outside it, and installs
// a host whose config points the plugin at the directory.
func setup(t *testing.T, extra map[string]string) (root, secret string) {
	t.Helper()
	base := t.TempDir()
	root = filepath.Join(base, "served")
	secret = filepath.Join(base, "secret.txt")
	files := map[string][]byte{
		"a.txt":          []byte("hello"),
		"notes/b.md":     []byte("# B\n"),
		"notes/deep/c.c": []byte("int main;"),
		"img.png":        pngBytes,
		"blob.bin":       {0, 1, 2, 0xff},
		"unknown.xyz":    []byte("plain text"),
		"with space.txt": []byte("spaced"),
		".hidden/x.txt":  []byte("hidden"),
		".dotfile":       []byte("hidden"),
	}
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(secret, []byte("top secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(root, "escape.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "a.txt"), filepath.Join(root, "inside.txt")); err != nil {
		t.Fatal(err)
	}
	cfg := map[string]string{"root": root}
	for k, v := range extra {
		cfg[k] = v
	}
	guesttest.Install(t, &guesttest.Host{ConfigValues: cfg})
	return root, secret
}

func TestListResources(t *testing.T) {
	root, _ := setup(t, nil)
	got := guesttest.ListResources(t)
	want := []struct{ name, mime string }{
		{"a.txt", "text/plain"}, {"blob.bin", ""}, {"img.png", "image/png"},
		{"notes/b.md", "text/markdown"}, {"notes/deep/c.c", "text/x-c"}, {"unknown.xyz", ""}, {"with space.txt", "text/plain"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d resources %+v; want %d (symlinks and hidden files skipped)", len(got), got, len(want))
	}
	for i, w := range want {
		r := got[i]
		if r.Name != w.name || r.MimeType != w.mime || r.URI != fileURI(root+"/"+w.name) || r.Size == nil {
			t.Errorf("resource %d = %+v; want name %s, mime %q, uri %s, a size", i, r, w.name, w.mime, fileURI(root+"/"+w.name))
		}
	}
	if got[6].URI != "file://"+root+"/with%20space.txt" {
		t.Errorf("URI with a space = %s; want it percent-encoded", got[6].URI)
	}
	tmpl := guesttest.ListResourceTemplates(t)
	if len(tmpl) != 1 || tmpl[0].URITemplate != "file://{+path}" {
		t.Errorf("templates = %+v; want file://{+path}", tmpl)
	}
}

func TestReadResource(t *testing.T) {
	root, secret := setup(t, nil)
	tests := []struct {
		uri, text, blob, mime, err string
	}{
		{uri: fileURI(root + "/a.txt"), text: "hello", mime: "text/plain"},
		{uri: fileURI(root + "/with space.txt"), text: "spaced", mime: "text/plain"},
		{uri: fileURI(root + "/unknown.xyz"), text: "plain text", mime: "text/plain"},
		{uri: fileURI(root + "/inside.txt"), text: "hello", mime: "text/plain"},
		{uri: fileURI(root + "/img.png"), blob: base64.StdEncoding.EncodeToString(pngBytes), mime: "image/png"},
		{uri: fileURI(root + "/blob.bin"), blob: "AAEC/w==", mime: "application/octet-stream"},
		{uri: fileURI(root + "/nope.txt"), err: "resource not found"},
		{uri: fileURI(root + "/notes"), err: "is a directory"},
		{uri: fileURI(secret), err: "outside the served directory"},
		{uri: fileURI(root + "/../secret.txt"), err: "outside the served directory"},
		{uri: "file://" + root + "/%2e%2e/secret.txt", err: "outside the served directory"},
		{uri: fileURI(root + "/escape.txt"), err: "outside the served directory"},
		{uri: "file:///etc/passwd", err: "outside the served directory"},
		{uri: "http://example.com/", err: "resource not found"},
	}
	for _, tt := range tests {
		res, err := guesttest.ReadResource(t, tt.uri)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("read %s = %+v, %v; want error %q", tt.uri, res, err, tt.err)
			}
			if err != nil && strings.Contains(err.Error(), "top secret") {
				t.Errorf("read %s: the error leaks the secret", tt.uri)
			}
			continue
		}
		if err != nil || len(res.Contents) != 1 {
			t.Errorf("read %s = %+v, %v; want one item", tt.uri, res, err)
			continue
		}
		c := res.Contents[0]
		if c.URI != tt.uri || c.Text != tt.text || c.Blob != tt.blob || c.MimeType != tt.mime {
			t.Errorf("read %s = %+v; want text %q blob %q mime %s", tt.uri, c, tt.text, tt.blob, tt.mime)
		}
	}
}

func TestMaxBytes(t *testing.T) {
	root, _ := setup(t, map[string]string{"max_bytes": "3"})
	if _, err := guesttest.ReadResource(t, fileURI(root+"/a.txt")); err == nil || !strings.Contains(err.Error(), "more than the limit of 3") {
		t.Errorf("reading 5 bytes with max_bytes 3: %v; want a limit error", err)
	}
}

func TestReadFileTool(t *testing.T) {
	root, secret := setup(t, nil)
	tests := []struct {
		path    string
		typ     string
		want    string
		isError bool
	}{
		{"a.txt", "text", "hello", false},
		{"notes/../a.txt", "text", "hello", false},
		{"/" + strings.TrimPrefix(root, "/") + "/notes/b.md", "text", "# B\n", false},
		{"img.png", "image", base64.StdEncoding.EncodeToString(pngBytes), false},
		{"blob.bin", "resource", "AAEC/w==", false},
		{"../secret.txt", "text", "outside the served directory", true},
		{"notes/../../secret.txt", "text", "outside the served directory", true},
		{secret, "text", "outside the served directory", true},
		{"escape.txt", "text", "outside the served directory", true},
		{"/etc/passwd", "text", "outside the served directory", true},
		{"missing.txt", "text", "read missing.txt: missing.txt: resource not found", true},
		{"", "text", "invalid arguments: missing required argument \"path\"", true},
	}
	for _, tt := range tests {
		args := map[string]string{"path": tt.path}
		if tt.path == "" {
			args = nil
		}
		res := guesttest.CallTool(t, "read_file", args)
		if len(res.Content) != 1 || res.IsError != tt.isError || res.Content[0].Type != tt.typ {
			t.Errorf("read_file %q = %+v; want one %s block, isError %v", tt.path, res, tt.typ, tt.isError)
			continue
		}
		c := res.Content[0]
		got := c.Text
		switch c.Type {
		case "image":
			got = c.Data
		case "resource":
			got = c.Resource.Blob
		}
		if !strings.Contains(got, tt.want) {
			t.Errorf("read_file %q: got %q; want %q", tt.path, got, tt.want)
		}
		if strings.Contains(got, "top secret") {
			t.Errorf("read_file %q leaked the secret", tt.path)
		}
	}
}

func TestListDir(t *testing.T) {
	setup(t, nil)
	res := guesttest.CallTool(t, "list_dir", nil)
	var out ListDirOut
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
		t.Fatalf("list_dir: %v: %s", err, res.StructuredContent)
	}
	var names []string
	for _, e := range out.Entries {
		names = append(names, e.Name+":"+e.Type)
	}
	want := ".dotfile:file .hidden:dir a.txt:file blob.bin:file escape.txt:symlink img.png:file inside.txt:symlink notes:dir unknown.xyz:file with space.txt:file"
	if out.Path != "." || strings.Join(names, " ") != want {
		t.Errorf("list_dir = %s %v; want . %s", out.Path, names, want)
	}
	res = guesttest.CallTool(t, "list_dir", map[string]string{"path": "notes"})
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil || out.Path != "notes" || len(out.Entries) != 2 || out.Entries[0].Name != "b.md" || out.Entries[0].Size != 4 {
		t.Errorf("list_dir notes = %s; want b.md (4 bytes) and deep", res.StructuredContent)
	}
	for _, p := range []string{"..", "../..", "/", "notes/../../x"} {
		res := guesttest.CallTool(t, "list_dir", map[string]string{"path": p})
		if !res.IsError || !strings.Contains(res.Content[0].Text, "outside the served directory") {
			t.Errorf("list_dir %q = %+v; want an isError refusal", p, res)
		}
	}
	if res := guesttest.CallTool(t, "list_dir", map[string]string{"path": "nope"}); !res.IsError || !strings.Contains(res.Content[0].Text, "list nope: no such file or directory") {
		t.Errorf("list_dir nope = %+v; want no such file", res)
	}
}

func TestSummarizePrompt(t *testing.T) {
	root, _ := setup(t, nil)
	res, err := guesttest.GetPrompt(t, "summarize_file", map[string]string{"path": "notes/b.md"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Messages) != 2 {
		t.Fatalf("messages = %+v; want 2", res.Messages)
	}
	r := res.Messages[0].Content.Resource
	if res.Messages[0].Content.Type != abi.ContentResource || r == nil || r.URI != fileURI(root+"/notes/b.md") || r.Text != "# B\n" || r.MimeType != "text/markdown" {
		t.Errorf("first message = %+v; want the embedded file", res.Messages[0])
	}
	if !strings.Contains(res.Messages[1].Content.Text, "summarize the file notes/b.md") {
		t.Errorf("second message = %q; want the request", res.Messages[1].Content.Text)
	}
	if _, err := guesttest.GetPrompt(t, "summarize_file", nil); err == nil || !strings.Contains(err.Error(), `missing required argument "path"`) {
		t.Errorf("summarize_file without path: %v; want missing argument", err)
	}
	if _, err := guesttest.GetPrompt(t, "summarize_file", map[string]string{"path": "../secret.txt"}); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("summarize_file ../secret.txt: %v; want a refusal", err)
	}
}

func TestCompletion(t *testing.T) {
	root, _ := setup(t, nil)
	tests := []struct {
		ref  abi.CompleteRef
		arg  abi.CompleteArgument
		want string
	}{
		{abi.CompleteRef{Type: "prompt", Name: "summarize_file"}, abi.CompleteArgument{Name: "path", Value: "notes/"}, "notes/b.md,notes/deep/c.c"},
		{abi.CompleteRef{Type: "prompt", Name: "summarize_file"}, abi.CompleteArgument{Name: "path", Value: "W"}, "with space.txt"},
		{abi.CompleteRef{Type: "prompt", Name: "summarize_file"}, abi.CompleteArgument{Name: "path", Value: ".h"}, ""},
		{abi.CompleteRef{Type: "resource", URI: "file://{+path}"}, abi.CompleteArgument{Name: "path", Value: root + "/i"}, root + "/img.png"},
	}
	for _, tt := range tests {
		res, err := guesttest.Complete(t, abi.CompleteParams{Ref: tt.ref, Argument: tt.arg})
		if err != nil {
			t.Errorf("complete %+v: %v", tt.arg, err)
			continue
		}
		if got := strings.Join(res.Completion.Values, ","); got != tt.want {
			t.Errorf("complete %q = %q; want %q", tt.arg.Value, got, tt.want)
		}
	}
}

func TestWriteFile(t *testing.T) {
	root, secret := setup(t, nil)
	for _, tl := range guesttest.ListTools(t) {
		if tl.Name == "write_file" {
			t.Fatalf("write_file is registered without writable = true")
		}
	}
	registerWriteFile()
	t.Cleanup(func() { guest.RemoveTool("write_file") })

	res := guesttest.CallTool(t, "write_file", map[string]string{"path": "new/dir/n.txt", "content": "fresh"})
	if res.IsError || res.Content[0].Text != "wrote 5 bytes to new/dir/n.txt" {
		t.Errorf("write_file = %+v; want success", res)
	}
	if b, err := os.ReadFile(filepath.Join(root, "new", "dir", "n.txt")); err != nil || string(b) != "fresh" {
		t.Errorf("written file = %q, %v; want fresh", b, err)
	}
	for _, p := range []string{"../secret.txt", "escape.txt", secret, "."} {
		res := guesttest.CallTool(t, "write_file", map[string]string{"path": p, "content": "pwned"})
		if !res.IsError {
			t.Errorf("write_file %q = %+v; want a refusal", p, res)
		}
	}
	if b, _ := os.ReadFile(secret); string(b) != "top secret" {
		t.Errorf("secret changed to %q", b)
	}
}

// FuzzResolve checks that no path resolves outside the root.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"a", "../a", "/srv/x/../../etc", "file:///srv/%2e%2e/x", "a/./b//c", "", "....//", "\x00"} {
		f.Add(s)
	}
	s := settings{root: "/srv/data", maxBytes: 1}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := s.resolve(p)
		if err == nil && !within(s.root, got) {
			t.Errorf("resolve(%q) = %q: outside %s", p, got, s.root)
		}
	})
}

// An unmounted root lists no resources (the tools stay available) and says
// why on the host's log.
func TestListResourcesWithoutMount(t *testing.T) {
	h := &guesttest.Host{ConfigValues: map[string]string{"root": filepath.Join(t.TempDir(), "not-mounted")}}
	guesttest.Install(t, h)
	if got := guesttest.ListResources(t); len(got) != 0 {
		t.Errorf("got %d resources; want none", len(got))
	}
	if logs := h.Logs(); len(logs) != 1 || !strings.Contains(logs[0], "allowed_paths") {
		t.Errorf("logs = %q; want one warning pointing at allowed_paths", logs)
	}
}
