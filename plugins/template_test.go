package plugins

import (
	"reflect"
	"strings"
	"testing"
)

func TestURITemplateMatch(t *testing.T) {
	tests := []struct {
		tpl, uri string
		want     map[string]string // nil: no match
	}{
		{"file:///{path}", "file:///a.txt", map[string]string{"path": "a.txt"}},
		{"file:///{path}", "file:///dir/a.txt", nil},
		{"file:///{+path}", "file:///dir/a.txt", map[string]string{"path": "dir/a.txt"}},
		{"file:///{path}", "file:///", nil}, // values are not empty
		{"users://{id}/profile", "users://42/profile", map[string]string{"id": "42"}},
		{"users://{id}/profile", "users://42/posts", nil},
		{"repo://{owner}/{repo}/issues/{n}", "repo://a/b/issues/7", map[string]string{"owner": "a", "repo": "b", "n": "7"}},
		{"search://{q}", "search://a?b", nil},
		{"doc://x{#frag}", "doc://x#sec/1", map[string]string{"frag": "sec/1"}},
		{"doc://x{#frag}", "doc://xsec", nil},
		{"a://{x}{y}", "a://pq", map[string]string{"x": "p", "y": "q"}},
		{"a://{+x}/end", "a://p/q/end", map[string]string{"x": "p/q"}},
		{"a://{+x}/{y}", "a://p/q/r", map[string]string{"x": "p/q", "y": "r"}},
		{"lit://only", "lit://only", map[string]string{}},
		{"lit://only", "lit://only/", nil},
		{"pct://{v}", "pct://a%20b", map[string]string{"v": "a%20b"}},
	}
	for _, tt := range tests {
		tpl, err := parseURITemplate(tt.tpl)
		if err != nil {
			t.Errorf("parse %q: %v", tt.tpl, err)
			continue
		}
		got, ok := tpl.match(tt.uri)
		if ok != (tt.want != nil) || !reflect.DeepEqual(got, tt.want) && tt.want != nil {
			t.Errorf("%q.match(%q) = %v, %v; want %v", tt.tpl, tt.uri, got, ok, tt.want)
		}
	}
}

func TestParseURITemplateErrors(t *testing.T) {
	tests := []struct{ tpl, want string }{
		{"a://{x", "unclosed '{'"},
		{"a://x}", "unmatched '}'"},
		{"a://{}", "empty expression"},
		{"a://{?q}", `unsupported expression "{?q}"`},
		{"a://{x,y}", `unsupported expression "{x,y}"`},
		{"a://{x:3}", `unsupported expression "{x:3}"`},
		{"a://{x*}", `unsupported expression "{x*}"`},
		{"a://{x}/{x}", `variable "x" appears twice`},
	}
	for _, tt := range tests {
		_, err := parseURITemplate(tt.tpl)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parse %q: got %v; want an error containing %q", tt.tpl, err, tt.want)
		}
	}
}

func TestMatchTemplatePrefersSpecific(t *testing.T) {
	g := &Generation{}
	for _, s := range []string{"x://{a}/{b}", "x://fixed/{b}", "y://{+rest}"} {
		tpl, err := parseURITemplate(s)
		if err != nil {
			t.Fatal(err)
		}
		g.Templates = append(g.Templates, &Template{tpl: tpl, Raw: []byte(s)})
		g.Templates[len(g.Templates)-1].Def.URITemplate = s
	}
	tests := []struct{ uri, want string }{
		{"x://fixed/1", "x://fixed/{b}"},
		{"x://other/1", "x://{a}/{b}"},
		{"y://a/b/c", "y://{+rest}"},
		{"z://none", ""},
	}
	for _, tt := range tests {
		got, _ := g.MatchTemplate(tt.uri)
		name := ""
		if got != nil {
			name = got.Def.URITemplate
		}
		if name != tt.want {
			t.Errorf("MatchTemplate(%q) = %q; want %q", tt.uri, name, tt.want)
		}
	}
}

// FuzzURITemplate checks that matching never panics and that expanding a
// template with the variables a match found gives back the URI.
func FuzzURITemplate(f *testing.F) {
	f.Add("file:///{+path}", "file:///a/b")
	f.Add("x://{a}{b}/{c}", "x://pq/r")
	f.Add("doc://x{#f}", "doc://x#y")
	f.Add("{a}", "")
	f.Fuzz(func(t *testing.T, tplStr, uri string) {
		if len(uri) > 512 || len(tplStr) > 128 {
			return
		}
		tpl, err := parseURITemplate(tplStr)
		if err != nil {
			return
		}
		vars, ok := tpl.match(uri)
		if !ok {
			return
		}
		if got := tpl.expand(vars); got != uri {
			t.Fatalf("%q matched %q with %v, which expands to %q", tplStr, uri, vars, got)
		}
		for _, p := range tpl.parts {
			if p.lit == "" && p.op == 0 && strings.ContainsAny(vars[p.name], "/?#") {
				t.Fatalf("%q matched %q: simple variable %s = %q holds a reserved character", tplStr, uri, p.name, vars[p.name])
			}
			if p.lit == "" && vars[p.name] == "" {
				t.Fatalf("%q matched %q: variable %s is empty", tplStr, uri, p.name)
			}
		}
	})
}
