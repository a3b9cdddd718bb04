package plugins

import (
	"context"
	"reflect"
	"testing"

	"github.com/mcphost/mcphost/plugins/config"
)

func TestDiff(t *testing.T) {
	ctx := context.Background()
	l := NewLoader(LoaderOptions{Logger: discard()})
	base := fake{
		tools:     []string{tool("t")},
		resources: []string{resource("mem://r")},
		templates: []string{template("mem://t/{x}")},
		prompts:   []string{prompt("p")},
	}
	baseMod := base.module()
	other := fake{tools: []string{tool("o")}}.module()
	g0 := build(t, l, nil, native("a", baseMod), native("o", other))
	defer g0.Close(ctx)

	with := func(mut func(*fake)) *fakeModule {
		f := base
		mut(&f)
		return f.module()
	}
	tests := []struct {
		name  string
		specs func() []config.Spec
		want  Changes
	}{
		{"same modules", func() []config.Spec { return []config.Spec{native("a", baseMod), native("o", other)} }, Changes{}},
		{"new module, same lists", func() []config.Spec { return []config.Spec{native("a", base.module()), native("o", other)} },
			Changes{Reloaded: []string{"a"}, Updated: []string{"mem://r", "mem://t/{x}"}}},
		{"tool description", func() []config.Spec {
			return []config.Spec{native("a", with(func(f *fake) {
				f.tools = []string{`{"name":"t","description":"new","inputSchema":{"type":"object"}}`}
			})), native("o", other)}
		}, Changes{Tools: true, Reloaded: []string{"a"}, Updated: []string{"mem://r", "mem://t/{x}"}}},
		{"template changed", func() []config.Spec {
			return []config.Spec{native("a", with(func(f *fake) { f.templates = []string{template("mem://t2/{x}")} })), native("o", other)}
		}, Changes{Resources: true, Reloaded: []string{"a"}, Updated: []string{"mem://r", "mem://t/{x}", "mem://t2/{x}"}}},
		{"prompt removed", func() []config.Spec {
			return []config.Spec{native("a", with(func(f *fake) { f.prompts = nil })), native("o", other)}
		}, Changes{Prompts: true, Reloaded: []string{"a"}, Updated: []string{"mem://r", "mem://t/{x}"}}},
		{"plugin removed", func() []config.Spec { return []config.Spec{native("a", baseMod)} }, Changes{Tools: true, Reloaded: []string{"o"}}},
		{"prefix changed", func() []config.Spec {
			p := "x_"
			return []config.Spec{native("a", baseMod), {Name: "o", Native: other, ToolPrefix: &p}}
		}, Changes{Tools: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := build(t, l, g0, tt.specs()...)
			defer g.Close(ctx)
			if got := Diff(g0, g); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Diff: got %+v; want %+v", got, tt.want)
			}
		})
	}

	if got, want := Diff(nil, g0), (Changes{Tools: true, Resources: true, Prompts: true, Reloaded: []string{"a", "o"}}); !reflect.DeepEqual(got, want) {
		t.Errorf("Diff(nil, g0): got %+v; want %+v", got, want)
	}
	if got := Diff(g0, g0); got.Any() {
		t.Errorf("Diff(g0, g0): got %+v; want nothing", got)
	}
	if got := Diff(nil, nil); got.Any() {
		t.Errorf("Diff(nil, nil): got %+v; want nothing", got)
	}
}
