package main

import (
	"strconv"

	guest "github.com/mcphost/mcphost/sdk-guest"
)

func main() {}

const (
	defaultRoot     = "/data"
	defaultMaxBytes = 4 << 20 // per read; base64 makes binary output 4/3 larger
	maxListed       = 1000    // resources listed at most
	uriTemplate     = "file://{+path}"
)

// settings are read from the plugin's config on every call, so a config
// change needs no rebuild.
type settings struct {
	root     string
	maxBytes int64
}

func current() settings {
	s := settings{root: defaultRoot, maxBytes: defaultMaxBytes}
	if v, ok := guest.Config("root"); ok && v != "" {
		s.root = cleanRoot(v)
	}
	if v, ok := guest.Config("max_bytes"); ok {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			s.maxBytes = n
		}
	}
	return s
}

func init() {
	registerResources()
	registerTools()
	registerPrompt()
	// write_file exists only when the configuration asks for it; the
	// config is read once, when the plugin starts.
	if v, _ := guest.Config("writable"); v == "true" {
		registerWriteFile()
	}
}
