package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
)

// ListDirIn is the input of list_dir.
type ListDirIn struct {
	Path string `json:"path,omitempty" jsonschema:"directory relative to the served root (default: the root itself)"`
}

// Entry is one directory entry.
type Entry struct {
	Name string `json:"name"`
	Type string `json:"type" jsonschema:"file, dir, symlink or other"`
	Size int64  `json:"size,omitempty" jsonschema:"size in bytes (files only)"`
}

// ListDirOut is the output of list_dir.
type ListDirOut struct {
	Path    string  `json:"path" jsonschema:"the directory, relative to the root"`
	Entries []Entry `json:"entries"`
}

// ReadFileIn is the input of read_file.
type ReadFileIn struct {
	Path string `json:"path" jsonschema:"file path relative to the served root"`
}

// WriteFileIn is the input of write_file.
type WriteFileIn struct {
	Path    string `json:"path" jsonschema:"file path relative to the served root"`
	Content string `json:"content" jsonschema:"the new content of the file (UTF-8 text)"`
}

func registerTools() {
	ro := &abi.ToolAnnotations{ReadOnlyHint: new(true), DestructiveHint: new(false), IdempotentHint: new(true), OpenWorldHint: new(false)}
	guest.AddToolOut(guest.Tool{Name: "list_dir", Title: "List directory", Annotations: ro,
		Description: "Lists a directory below the served root: names, types and sizes."}, listDir)
	guest.AddTool(guest.Tool{Name: "read_file", Title: "Read file", Annotations: ro,
		Description: "Reads a file below the served root. Text comes back as text, images and audio as such, anything else as an embedded blob."},
		readFile)
}

func registerWriteFile() {
	guest.AddTool(guest.Tool{Name: "write_file", Title: "Write file",
		Description: "Creates or replaces a text file below the served root.",
		Annotations: &abi.ToolAnnotations{ReadOnlyHint: new(false), DestructiveHint: new(true), IdempotentHint: new(true), OpenWorldHint: new(false)}},
		writeFile)
}

func listDir(_ *guest.Context, in ListDirIn) (ListDirOut, error) {
	s := current()
	p, err := s.resolve(in.Path)
	if err != nil {
		return ListDirOut{}, err
	}
	ents, err := os.ReadDir(p)
	if err != nil {
		return ListDirOut{}, fmt.Errorf("list %s: %w", s.rel(p), unwrapPath(err))
	}
	out := ListDirOut{Path: s.rel(p), Entries: []Entry{}}
	for _, e := range ents {
		ent := Entry{Name: e.Name(), Type: "other"}
		switch t := e.Type(); {
		case t.IsDir():
			ent.Type = "dir"
		case t&fs.ModeSymlink != 0:
			ent.Type = "symlink"
		case t.IsRegular():
			ent.Type = "file"
			if info, err := e.Info(); err == nil {
				ent.Size = info.Size()
			}
		}
		out.Entries = append(out.Entries, ent)
	}
	sort.Slice(out.Entries, func(i, j int) bool { return out.Entries[i].Name < out.Entries[j].Name })
	return out, nil
}

func readFile(_ *guest.Context, in ReadFileIn) (*guest.Result, error) {
	s := current()
	p, err := s.resolve(in.Path)
	if err != nil {
		return nil, err
	}
	c, err := readContents(s, p)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", in.Path, unwrapPath(err))
	}
	switch {
	case c.Blob == "":
		return guest.TextResult(c.Text), nil
	case strings.HasPrefix(c.MimeType, "image/"):
		return guest.NewResult(guest.ImageBase64(c.Blob, c.MimeType)), nil
	case strings.HasPrefix(c.MimeType, "audio/"):
		return guest.NewResult(guest.AudioBase64(c.Blob, c.MimeType)), nil
	}
	return guest.NewResult(abi.Content{Type: abi.ContentResource, Resource: &c}), nil
}

func writeFile(_ *guest.Context, in WriteFileIn) (*guest.Result, error) {
	s := current()
	p, err := s.resolve(in.Path)
	if err != nil {
		return nil, err
	}
	if p == s.root {
		return nil, errors.New("write_file: the root is a directory")
	}
	if int64(len(in.Content)) > s.maxBytes {
		return nil, fmt.Errorf("write_file: %d bytes is more than the limit of %d", len(in.Content), s.maxBytes)
	}
	if err := os.MkdirAll(path.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("write_file: %w", unwrapPath(err))
	}
	if err := os.WriteFile(p, []byte(in.Content), 0o644); err != nil {
		return nil, fmt.Errorf("write_file: %w", unwrapPath(err))
	}
	return guest.TextResult(fmt.Sprintf("wrote %d bytes to %s", len(in.Content), s.rel(p))), nil
}

// unwrapPath drops the absolute path from *fs.PathError, which callers
// already name relative to the root.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
