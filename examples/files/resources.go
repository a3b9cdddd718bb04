package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
)

func registerResources() {
	guest.AddResourceLister(listResources)
	guest.AddResourceTemplate(abi.ResourceTemplate{
		URITemplate: uriTemplate,
		Name:        "file",
		Title:       "File",
		Description: "A file below the served directory, by absolute path (file:///data/notes/todo.md).",
	}, func(_ *guest.Context, uri string, vars map[string]string) (*abi.ReadResourceResult, error) {
		s := current()
		p, err := s.resolve(vars["path"])
		if err != nil {
			return nil, err
		}
		c, err := readContents(s, p)
		if err != nil {
			return nil, err
		}
		c.URI = uri
		return &abi.ReadResourceResult{Contents: []abi.ResourceContents{c}}, nil
	})
	guest.CompleteTemplateVar(uriTemplate, "path", func(_ *guest.Context, value string, _ map[string]string) ([]string, error) {
		s := current()
		files, err := walk(s, 0)
		if err != nil {
			return nil, err
		}
		return guest.FilterPrefix(files, value), nil
	})
}

// walk returns the absolute paths of the regular files below the root, in
// lexical order, skipping hidden files and directories; limit 0 means no
// limit.
func walk(s settings, limit int) ([]string, error) {
	var out []string
	errLimit := errors.New("limit")
	err := fs.WalkDir(os.DirFS(s.root), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return err
			}
			return nil // unreadable entries are skipped
		}
		if p != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			if limit > 0 && len(out) >= limit {
				return errLimit
			}
			out = append(out, path.Join(s.root, p))
		}
		return nil
	})
	if err != nil && !errors.Is(err, errLimit) {
		return nil, fmt.Errorf("list %s: %w", s.root, err)
	}
	return out, nil
}

func listResources(*guest.Context) ([]abi.Resource, error) {
	s := current()
	files, err := walk(s, maxListed)
	if err != nil {
		// A root that is not mounted (no allowed_paths) is a configuration
		// mistake, not a reason to lose the plugin's tools: list nothing and
		// say why on the host's log.
		guest.Logf(guest.LevelWarning, "files: listing no resources: %v (is %s mounted with allowed_paths?)", err, s.root)
		return nil, nil
	}
	out := make([]abi.Resource, 0, len(files))
	for _, p := range files {
		r := abi.Resource{URI: fileURI(p), Name: s.rel(p), Title: path.Base(p), MimeType: mimeOf(p)}
		if st, err := os.Stat(p); err == nil {
			r.Size = new(st.Size())
		}
		out = append(out, r)
	}
	return out, nil
}

// readContents reads p as one resource item: text when it is text, blob
// otherwise.
func readContents(s settings, p string) (abi.ResourceContents, error) {
	data, err := readLimited(p, s.maxBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return abi.ResourceContents{}, fmt.Errorf("%s: %w", s.rel(p), guest.ErrNotFound)
		}
		return abi.ResourceContents{}, err
	}
	mt := mimeOf(p)
	if isText(mt, data) {
		if mt == "" {
			mt = "text/plain"
		}
		return abi.ResourceContents{URI: fileURI(p), MimeType: mt, Text: string(data)}, nil
	}
	if mt == "" {
		mt = "application/octet-stream"
	}
	if len(data) == 0 {
		return abi.ResourceContents{URI: fileURI(p), MimeType: mt}, nil
	}
	blob := guest.BlobResource(fileURI(p), mt, data).Contents[0]
	return blob, nil
}
