package guest

import (
	"fmt"

	"github.com/mcphost/mcphost/abi"
)

// ResourceHandler reads one resource registered with [AddResource].
type ResourceHandler func(ctx *Context, uri string) (*abi.ReadResourceResult, error)

// TemplateHandler reads a resource whose URI matched a template; vars holds
// the template's variables, percent-decoded.
type TemplateHandler func(ctx *Context, uri string, vars map[string]string) (*abi.ReadResourceResult, error)

// ResourceLister lists resources computed at run time (files in a
// directory, rows in a table). Reads of the URIs it returns are served by
// a template registered with [AddResourceTemplate] (or a static resource).
type ResourceLister func(ctx *Context) ([]abi.Resource, error)

// AddResource registers a resource with a fixed URI. Registering the same
// URI again replaces it.
func AddResource(r abi.Resource, h ResourceHandler) {
	if r.URI == "" || r.Name == "" {
		panic(fmt.Sprintf("guest: resource %q: uri and name are required", r.URI))
	}
	std.mu.Lock()
	defer std.mu.Unlock()
	for i, e := range std.resources {
		if e.def.URI == r.URI {
			std.resources[i] = &resourceEntry{def: r, handler: h}
			return
		}
	}
	std.resources = append(std.resources, &resourceEntry{def: r, handler: h})
}

// RemoveResource unregisters a resource and reports whether it existed.
// Call [NotifyResourceListChanged] afterwards to tell the client.
func RemoveResource(uri string) bool {
	std.mu.Lock()
	defer std.mu.Unlock()
	for i, e := range std.resources {
		if e.def.URI == uri {
			std.resources = append(std.resources[:i:i], std.resources[i+1:]...)
			return true
		}
	}
	return false
}

// AddResourceLister adds a function whose resources are listed after the
// static ones.
func AddResourceLister(l ResourceLister) {
	std.mu.Lock()
	defer std.mu.Unlock()
	std.listers = append(std.listers, l)
}

// AddResourceTemplate registers an RFC 6570 URI template. Supported
// expressions are {name}, whose value is one path segment (no '/', '?' or
// '#'), and {+name}, whose value may hold any characters; two expressions
// must be separated by literal text. Static resources are matched first,
// then templates in registration order. It panics on an unsupported
// template.
func AddResourceTemplate(t abi.ResourceTemplate, h TemplateHandler) {
	tmpl, err := parseURITemplate(t.URITemplate)
	if err != nil {
		panic("guest: " + err.Error())
	}
	if t.Name == "" {
		panic(fmt.Sprintf("guest: resource template %q: name is required", t.URITemplate))
	}
	std.mu.Lock()
	defer std.mu.Unlock()
	e := &templateEntry{def: t, tmpl: tmpl, handler: h}
	for i, old := range std.templates {
		if old.def.URITemplate == t.URITemplate {
			std.templates[i] = e
			return
		}
	}
	std.templates = append(std.templates, e)
}

// MatchTemplate reports whether uri matches the RFC 6570 template (with
// the restrictions of [AddResourceTemplate]) and returns its variables.
func MatchTemplate(template, uri string) (map[string]string, bool, error) {
	t, err := parseURITemplate(template)
	if err != nil {
		return nil, false, err
	}
	vars, ok := t.match(uri)
	return vars, ok, nil
}
