package guest

import (
	"maps"
	"strings"
	"testing"
)

func TestMatchTemplate(t *testing.T) {
	tests := []struct {
		tmpl, uri string
		want      map[string]string // nil: no match
	}{
		{"test://template/{id}/data", "test://template/123/data", map[string]string{"id": "123"}},
		{"test://template/{id}/data", "test://template/a%2Fb/data", map[string]string{"id": "a/b"}},
		{"test://template/{id}/data", "test://template/1/2/data", nil},
		{"test://template/{id}/data", "test://template//data", nil},
		{"test://template/{id}/data", "test://template/123/data/", nil},
		{"test://template/{id}/data", "test://template/123/dat", nil},
		{"test://template/{id}", "test://template/123", map[string]string{"id": "123"}},
		{"test://template/{id}", "test://template/1?x", nil},
		{"file://{+path}", "file:///data/a/b%20c.txt", map[string]string{"path": "/data/a/b c.txt"}},
		{"file://{+path}", "file://", nil},
		{"x://{a}-{b}", "x://1-2-3", map[string]string{"a": "1-2", "b": "3"}},
		{"x://{+a}/end/{b}", "x://p/end/q/end/r", map[string]string{"a": "p/end/q", "b": "r"}},
		{"x://{a}.{b}", "x://name.tar.gz", map[string]string{"a": "name.tar", "b": "gz"}},
		{"x://{a}/{b}", "x://1/2", map[string]string{"a": "1", "b": "2"}},
		{"x://static", "x://static", map[string]string{}},
		{"x://static", "x://static2", nil},
		{"x://{a}", "x://%zz", map[string]string{"a": "%zz"}}, // malformed escapes stay as sent
	}
	for _, tt := range tests {
		got, ok, err := MatchTemplate(tt.tmpl, tt.uri)
		if err != nil {
			t.Errorf("MatchTemplate(%q): %v", tt.tmpl, err)
			continue
		}
		if ok != (tt.want != nil) || (ok && !maps.Equal(got, tt.want)) {
			t.Errorf("MatchTemplate(%q, %q) = %v, %v; want %v", tt.tmpl, tt.uri, got, ok, tt.want)
		}
	}
}

func TestParseTemplateErrors(t *testing.T) {
	tests := []struct{ tmpl, want string }{
		{"x://{a", "unterminated expression"},
		{"x://a}", "unmatched '}'"},
		{"x://{a}b}", "unmatched '}'"},
		{"x://{?q}", "expression {?q} is not supported"},
		{"x://{a,b}", "expression {a,b} is not supported"},
		{"x://{}", "expression {} is not supported"},
		{"x://{a}{b}", "two expressions must be separated"},
		{"x://{a}/{a}", `variable "a" appears twice`},
	}
	for _, tt := range tests {
		_, _, err := MatchTemplate(tt.tmpl, "x://")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("MatchTemplate(%q) error = %v; want %q", tt.tmpl, err, tt.want)
		}
	}
}

func TestTemplateVars(t *testing.T) {
	tmpl, err := parseURITemplate("x://{a}/{+b}/c")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tmpl.vars(), ","); got != "a,b" {
		t.Errorf("vars = %s; want a,b", got)
	}
}
