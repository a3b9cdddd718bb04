package main

import (
	"encoding/json"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
)

func registerResources() {
	guest.AddResource(abi.Resource{URI: "test://static-text", Name: "static-text", Title: "Static Text Resource",
		Description: "A static text resource for testing", MimeType: "text/plain"},
		func(_ *guest.Context, uri string) (*abi.ReadResourceResult, error) {
			return guest.TextResource(uri, "text/plain", "This is the content of the static text resource."), nil
		})
	guest.AddResource(abi.Resource{URI: "test://static-binary", Name: "static-binary", Title: "Static Binary Resource",
		Description: "A static binary resource (image) for testing", MimeType: "image/png"},
		func(_ *guest.Context, uri string) (*abi.ReadResourceResult, error) {
			return &abi.ReadResourceResult{Contents: []abi.ResourceContents{{URI: uri, MimeType: "image/png", Blob: pngBase64}}}, nil
		})
	guest.AddResource(abi.Resource{URI: "test://watched-resource", Name: "watched-resource", Title: "Watched Resource",
		Description: "A resource that auto-updates every 3 seconds", MimeType: "text/plain"},
		func(_ *guest.Context, uri string) (*abi.ReadResourceResult, error) {
			return guest.TextResource(uri, "text/plain", "Watched resource content"), nil
		})
	guest.AddResourceTemplate(abi.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template",
		Title: "Resource Template", Description: "A resource template with parameter substitution", MimeType: "application/json"},
		func(_ *guest.Context, uri string, vars map[string]string) (*abi.ReadResourceResult, error) {
			b, err := json.Marshal(struct {
				ID           string `json:"id"`
				TemplateTest bool   `json:"templateTest"`
				Data         string `json:"data"`
			}{vars["id"], true, "Data for ID: " + vars["id"]})
			if err != nil {
				return nil, err
			}
			return guest.TextResource(uri, "application/json", string(b)), nil
		})
}
