package main

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	guest "github.com/mcphost/mcphost/sdk-guest"
	"github.com/mcphost/mcphost/sdk-guest/guesttest"
)

func TestHTMLToText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"<p>Hello <b>world</b></p><p>Second &amp; last</p>", "Hello world\n\nSecond & last"},
		{"<html><head><title>T</title><style>p{color:red}</style></head><body><h1>Head</h1>text</body></html>", "T\n\nHead\n\ntext"},
		{"<ul><li>one</li><li>two</li></ul>", "- one\n- two"},
		{"a<script>var x = '<p>';</script>b", "ab"},
		{"a<SCRIPT type='x'>alert(1)</SCRIPT>b", "ab"},
		{"a<!-- hidden <p> -->b", "ab"},
		{"a<!-- unterminated", "a"},
		{"x < y and y > z", "x < y and y > z"},
		{"a <", "a <"},
		{"<div>a<div>b</div>c</div>", "a\nb\nc"},
		{`<a href="/x?a=1&b=2" title='>'>link</a> after`, "link after"},
		{"<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>", "a b\nc"},
		{"line<br>break<br/>again", "line\nbreak\nagain"},
		{"<p>  spaced \t out  </p>\n\n\n\n<p>para</p>", "spaced out\n\npara"},
		{"&lt;tag&gt; &eacute; &#x263A;", "<tag> é ☺"},
		{"<script>never closed", ""},
	}
	for _, tt := range tests {
		if got := htmlToText(tt.in); got != tt.want {
			t.Errorf("htmlToText(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzHTMLToText(f *testing.F) {
	for _, s := range []string{"<p>a</p>", "<script>", "<!--", "<a b='>'>", "&amp;", "<li>x", "\xff<p"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		out := htmlToText(doc)
		if utf8.ValidString(doc) && !utf8.ValidString(out) {
			t.Errorf("htmlToText(%q) = %q: invalid UTF-8 from valid input", doc, out)
		}
	})
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc\n\n[truncated: 3 of 6 bytes shown; raise max_bytes for more]"},
		{"ééé", 3, "é\n\n[truncated: 2 of 6 bytes shown; raise max_bytes for more]"},
	}
	for _, tt := range tests {
		if got := truncate(tt.s, tt.n); got != tt.want {
			t.Errorf("truncate(%q, %d) = %q; want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

// server fakes the host's HTTP with fixed responses by URL.
func server(t *testing.T, pages map[string]*guest.HTTPResponse) *[]*guest.HTTPRequest {
	var seen []*guest.HTTPRequest
	guesttest.Install(t, &guesttest.Host{HTTP: func(r *guest.HTTPRequest) (*guest.HTTPResponse, error) {
		seen = append(seen, r)
		if p, ok := pages[r.URL]; ok {
			return p, nil
		}
		return nil, errors.New("HTTP request to '" + r.URL + "' is not allowed")
	}})
	return &seen
}

func TestFetch(t *testing.T) {
	html := &guest.HTTPResponse{Status: 200, Header: map[string]string{"content-type": "text/html; charset=utf-8"},
		Body: []byte("<html><body><h1>Title</h1><p>Body &amp; more</p><script>x()</script></body></html>")}
	seen := server(t, map[string]*guest.HTTPResponse{
		"https://example.com/":         html,
		"https://example.com/missing":  {Status: 404, Header: map[string]string{"content-type": "text/plain"}, Body: []byte("no such page")},
		"https://example.com/data":     {Status: 200, Header: map[string]string{"content-type": "application/json"}, Body: []byte(`{"a":1}`)},
		"https://example.com/logo.png": {Status: 200, Header: map[string]string{"content-type": "image/png"}, Body: []byte("\x89PNG")},
		"https://example.com/app.bin":  {Status: 200, Header: map[string]string{"content-type": "application/octet-stream"}, Body: []byte{0, 1, 2}},
		"https://example.com/long":     {Status: 200, Header: map[string]string{"content-type": "text/plain"}, Body: []byte(strings.Repeat("a", 100))},
		"https://example.com/empty":    {Status: 204},
	})
	tests := []struct {
		args    map[string]any
		want    []string // substrings of the text
		isError bool
	}{
		{map[string]any{"url": "https://example.com/"}, []string{"URL: https://example.com/\nStatus: 200\nContent-Type: text/html; charset=utf-8\n\nTitle\n\nBody & more"}, false},
		{map[string]any{"url": "https://example.com/", "raw": true}, []string{"<h1>Title</h1>", "<script>"}, false},
		{map[string]any{"url": "https://example.com/missing"}, []string{"fetch https://example.com/missing: HTTP status 404", "no such page"}, true},
		{map[string]any{"url": "https://example.com/data"}, []string{"Content-Type: application/json\n\n{\"a\":1}"}, false},
		{map[string]any{"url": "https://example.com/app.bin"}, []string{"(binary content, 3 bytes, not shown)"}, false},
		{map[string]any{"url": "https://example.com/long", "max_bytes": 10}, []string{"aaaaaaaaaa\n\n[truncated: 10 of 100 bytes shown"}, false},
		{map[string]any{"url": "https://example.com/empty"}, []string{"Status: 204"}, false},
		{map[string]any{"url": "https://evil.example/"}, []string{"fetch https://evil.example/: http: HTTP request to 'https://evil.example/' is not allowed"}, true},
		{map[string]any{"url": "ftp://example.com/"}, []string{`"ftp://example.com/" is not an absolute http or https URL`}, true},
		{map[string]any{"url": "/relative"}, []string{"is not an absolute http or https URL"}, true},
		{map[string]any{"url": "https://example.com/", "max_bytes": 2000000}, []string{"max_bytes must be between 1 and 1000000"}, true},
	}
	for _, tt := range tests {
		res := guesttest.CallTool(t, "fetch", tt.args)
		if res.IsError != tt.isError || len(res.Content) != 1 {
			t.Errorf("fetch %v = %+v; want one block, isError %v", tt.args, res, tt.isError)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(res.Content[0].Text, w) {
				t.Errorf("fetch %v:\ngot  %q\nwant it to contain %q", tt.args, res.Content[0].Text, w)
			}
		}
		if strings.Contains(res.Content[0].Text, "x()") && tt.args["raw"] == nil {
			t.Errorf("fetch %v: script content leaked into text", tt.args)
		}
	}
	res := guesttest.CallTool(t, "fetch", map[string]any{"url": "https://example.com/logo.png"})
	if len(res.Content) != 2 || res.Content[1].Type != "image" || res.Content[1].Data != "iVBORw==" || res.Content[1].MimeType != "image/png" {
		t.Errorf("fetch image = %+v; want a text header and the image", res.Content)
	}
	r := (*seen)[0]
	if r.Method != "GET" || r.Header["User-Agent"] != userAgent || r.URL != "https://example.com/" {
		t.Errorf("request = %+v; want GET with the user agent", r)
	}
}
