package host

import "github.com/mcphost/mcphost/plugins"

// appsCapability is what mcphost declares of MCP Apps (SEP-1865) under
// capabilities.extensions: it serves ui:// resources of this MIME type
// (see plugins/apps.go). The client declares the same key with the MIME
// types it renders; mcphost lists the apps' tools and resources to every
// client alike, as the extension lets servers do, since the _meta and the
// resources are harmless to a client that does not render them.
func appsCapability() map[string]any {
	return map[string]any{"mimeTypes": []string{plugins.AppMIME}}
}

// extApps is the extension's key in capabilities.extensions.
const extApps = plugins.AppExtension
