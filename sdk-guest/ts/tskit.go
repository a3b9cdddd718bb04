package tskit

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
// directory once its node_modules holds the packages of its package.json
// (npm install, or a link to an installed copy for offline builds).
func BuildCommand() []string { return []string{"npm", "run", "--silent", "build"} }

// TestCommand returns how a built template tests itself: its tool called
// through mcphost, which must be on PATH or named by $MCPHOST.
func TestCommand() []string { return []string{"npm", "test", "--silent"} }

// Write writes the template for a plugin called name into dir: wit/,
// src/, build.mjs, test.mjs, tsconfig.json, package.json, plugins.toml
// and README.md. It refuses to overwrite files.
func Write(dir, name string) error { return kittmpl.Write(Template, "template", dir, name) }
