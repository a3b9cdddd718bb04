package main

import (
	"context"
	"fmt"
	"io"
	"strings"
)

func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("validate", stderr)
	var c common
	c.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	_, cfg, rt, err := c.setup(ctx, stderr)
	if err != nil {
		return err
	}
	defer rt.close(context.WithoutCancel(ctx))
	g, err := rt.loader.Build(ctx, cfg, nil)
	if err != nil {
		return err
	}
	defer g.Close(context.WithoutCancel(ctx))

	for _, p := range g.Plugins {
		fmt.Fprintf(stdout, "plugin %s (ABI v%d, runtime %s)\n", p.Name, p.ABI, p.Runtime)
		for _, t := range p.Tools {
			fmt.Fprintf(stdout, "  tool      %-32s %s\n", t.Name, firstLine(t.Def.Description))
		}
		for _, r := range p.Resources {
			fmt.Fprintf(stdout, "  resource  %-32s %s\n", r.Def.URI, firstLine(r.Def.Description))
		}
		for _, t := range p.Templates {
			fmt.Fprintf(stdout, "  template  %-32s %s\n", t.Def.URITemplate, firstLine(t.Def.Description))
		}
		for _, pr := range p.Prompts {
			fmt.Fprintf(stdout, "  prompt    %-32s %s\n", pr.Name, firstLine(pr.Def.Description))
		}
	}
	for _, f := range g.Failures {
		fmt.Fprintf(stdout, "FAILED plugin %s: %v\n", f.Plugin, f.Err)
	}
	if n := len(g.Failures); n > 0 {
		return fmt.Errorf("%d of %d plugins failed to load", n, n+len(g.Plugins))
	}
	fmt.Fprintf(stdout, "ok: %d plugins, %d tools, %d resources, %d templates, %d prompts\n",
		len(g.Plugins), len(g.Tools), len(g.Resources), len(g.Templates), len(g.Prompts))
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 72 {
		s = s[:69] + "..."
	}
	return s
}
