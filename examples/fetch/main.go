package main

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
	_ "github.com/mcphost/mcphost/sdk-guest/stateless"
)

func main() {}

const (
	defaultMaxBytes = 50_000
	limitMaxBytes   = 1_000_000
	userAgent       = "mcphost-fetch/1 (+https://github.com/mcphost/mcphost)"
)

// FetchIn is the input of fetch.
type FetchIn struct {
	URL      string `json:"url" jsonschema:"the http or https URL to fetch"`
	MaxBytes int    `json:"max_bytes,omitempty" jsonschema:"the most bytes of text to return (default 50000, at most 1000000)"`
	Raw      bool   `json:"raw,omitempty" jsonschema:"return HTML as is instead of converting it to text"`
}

func init() {
	guest.AddTool(guest.Tool{
		Name:        "fetch",
		Title:       "Fetch URL",
		Description: "Fetches a URL (GET) and returns its content: HTML as readable text, other text as is, images as images. Only hosts the server allows can be reached.",
		Annotations: &abi.ToolAnnotations{Title: "Fetch URL", ReadOnlyHint: new(true), DestructiveHint: new(false),
			IdempotentHint: new(true), OpenWorldHint: new(true)},
	}, fetch)
}

func fetch(_ *guest.Context, in FetchIn) (*guest.Result, error) {
	u, err := url.Parse(strings.TrimSpace(in.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return guest.Errorf("fetch: %q is not an absolute http or https URL", in.URL), nil
	}
	limit := in.MaxBytes
	switch {
	case limit == 0:
		limit = defaultMaxBytes
	case limit < 0 || limit > limitMaxBytes:
		return guest.Errorf("fetch: max_bytes must be between 1 and %d", limitMaxBytes), nil
	}
	resp, err := guest.HTTP(&guest.HTTPRequest{Method: "GET", URL: u.String(), Header: map[string]string{
		"User-Agent": userAgent,
		"Accept":     "text/html, text/plain;q=0.9, application/json;q=0.9, */*;q=0.5",
	}})
	if err != nil {
		return guest.Errorf("fetch %s: %v", u, err), nil
	}
	ctype := resp.HeaderValue("content-type")
	mt := strings.ToLower(strings.TrimSpace(strings.Split(ctype, ";")[0]))
	head := fmt.Sprintf("URL: %s\nStatus: %d\nContent-Type: %s\n\n", u, resp.Status, ctype)

	if resp.Status >= 400 {
		body := truncate(bodyText(mt, resp.Body, false), 2000)
		return guest.Errorf("fetch %s: HTTP status %d\n\n%s", u, resp.Status, body), nil
	}
	if strings.HasPrefix(mt, "image/") && len(resp.Body) > 0 {
		if len(resp.Body) > limitMaxBytes {
			return guest.Errorf("fetch %s: the image is %d bytes, more than %d", u, len(resp.Body), limitMaxBytes), nil
		}
		return guest.NewResult(guest.Text(strings.TrimSpace(head)),
			guest.ImageBase64(base64.StdEncoding.EncodeToString(resp.Body), mt)), nil
	}
	if !isTextual(mt, resp.Body) {
		return guest.TextResult(head + fmt.Sprintf("(binary content, %d bytes, not shown)", len(resp.Body))), nil
	}
	return guest.TextResult(head + truncate(bodyText(mt, resp.Body, in.Raw), limit)), nil
}

// bodyText is the body as text, HTML reduced unless raw.
func bodyText(mediaType string, body []byte, raw bool) string {
	s := strings.ToValidUTF8(string(body), "\uFFFD")
	if !raw && (mediaType == "text/html" || mediaType == "application/xhtml+xml" ||
		mediaType == "" && strings.Contains(strings.ToLower(s[:min(len(s), 512)]), "<html")) {
		return htmlToText(s)
	}
	return s
}

// isTextual reports whether a response should be shown as text.
func isTextual(mediaType string, body []byte) bool {
	switch {
	case strings.HasPrefix(mediaType, "text/"), strings.HasSuffix(mediaType, "+json"), strings.HasSuffix(mediaType, "+xml"):
		return true
	case mediaType == "application/json", mediaType == "application/xml", mediaType == "application/javascript",
		mediaType == "application/xhtml+xml", mediaType == "application/yaml", mediaType == "application/toml":
		return true
	case mediaType == "":
		return utf8.Valid(body)
	}
	return false
}

// truncate cuts s to at most n bytes on a rune boundary and says so.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n\n[truncated: %d of %d bytes shown; raise max_bytes for more]", cut, len(s))
}
