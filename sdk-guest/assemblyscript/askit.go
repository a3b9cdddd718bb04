package askit

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
// directory once its node_modules holds assemblyscript and @extism/as-pdk
// (npm install, or a link to an installed copy for offline builds).
func BuildCommand() []string { return []string{"npm", "run", "--silent", "build"} }

// Write writes the template for a plugin called name into dir: index.ts,
// mcphost.ts, package.json, plugins.toml and README.md. It refuses to
// overwrite files.
func Write(dir, name string) error { return kittmpl.Write(Template, "template", dir, name) }
