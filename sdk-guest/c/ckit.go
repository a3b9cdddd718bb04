package ckit

import (
	"embed"

	"github.com/mcphost/mcphost/sdk-guest/kittmpl"
)

// Template holds the plugin template under "template". Files ending in
// ".tmpl" use {{.Name}} for the plugin name; the others are copied as is.
//
//go:embed template
var Template embed.FS

// BuildCommand returns how a written template is built, run in its
// directory (it needs clang, wasm-ld and wasi-libc; see README.md).
func BuildCommand() []string { return []string{"sh", "build.sh"} }

// Write writes the template for a plugin called name into dir: plugin.c,
// mcphost.h, build.sh, plugins.toml and README.md. It refuses to overwrite
// files.
func Write(dir, name string) error { return kittmpl.Write(Template, "template", dir, name) }
