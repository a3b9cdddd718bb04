package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/source"
)

func cmdValidate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("validate", stdout, stderr)
	var c common
	c.register(fs)
	asJSON := fs.Bool("json", false, "print what the config loads as one JSON object (plugins, each with its tools, resources, templates, prompts or its load error)")
	if err := fs.parse(args); err != nil {
		return err
	}
	_, cfg, rt, err := c.setup(ctx, stderr)
	if err != nil {
		return err
	}
	defer rt.close(context.WithoutCancel(ctx))
	g, err := rt.loader.Build(ctx, cfg, nil)
	if err != nil {
		if ctx.Err() != nil {
			// Build stops every load at once (builds are killed, start
			// functions interrupted), so the first signal is enough.
			return fmt.Errorf("stopped by a signal before every plugin loaded: %w", err)
		}
		return err
	}
	defer g.Close(context.WithoutCancel(ctx))
	if *asJSON {
		return printJSON(stdout, g)
	}

	for _, p := range g.Plugins {
		fmt.Fprintf(stdout, "plugin %s (ABI v%d, runtime %s)\n", p.Name, p.ABI, p.Runtime)
		fmt.Fprintf(stdout, "  instances %s\n", p.Instances())
		if s := p.Signer(); s != nil {
			fmt.Fprintf(stdout, "  signed by %s, %s (%s)\n", s, s.Digest, s.From)
		}
		for _, t := range p.Tools {
			fmt.Fprintf(stdout, "  tool      %-32s %s\n", t.Name, firstLine(t.Def.Description))
		}
		for _, h := range p.Hidden {
			fmt.Fprintf(stdout, "  hidden    %-32s by %s\n", h.Name, h.Filter)
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
		for _, sk := range p.Skills {
			fmt.Fprintf(stdout, "  skill     %-32s %s\n", sk.URI, firstLine(sk.Description))
		}
		for _, w := range p.Warnings() {
			fmt.Fprintf(stdout, "  warning   %s\n", w)
		}
	}
	for _, f := range g.Failures {
		fmt.Fprintf(stdout, "FAILED plugin %s: %v\n", f.Plugin, f.Err)
	}
	unprovided := unprovidedImports(g)
	for _, u := range unprovided {
		fmt.Fprintf(stdout, "FAILED plugin %s: %s\n", u.Plugin, u.Error)
	}
	if err := validateResult(g, unprovided); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "ok: %s, %s, %s, %s, %s\n", count(len(g.Plugins), "plugin"), count(len(g.Tools), "tool"),
		count(len(g.Resources), "resource"), count(len(g.Templates), "template"), count(len(g.Prompts), "prompt"))
	return nil
}

// unprovidedImports reports each plugin that loaded but imports what this
// host does not provide: it would fail only when a call reaches such an
// import, so validate says so now.
func unprovidedImports(g *plugins.Generation) []failureReport {
	var out []failureReport
	for _, p := range g.Plugins {
		if u := p.UnprovidedImports(); len(u) > 0 {
			out = append(out, failureReport{Plugin: p.Name, Error: fmt.Sprintf(
				"imports what this host does not provide, so a call that reaches it traps: %s "+
					"(rebuild the component without it, or use a host that provides it)", strings.Join(u, ", "))})
		}
	}
	return out
}

// validateResult is validate's error: plugins that failed to load and
// plugins with imports the host does not provide.
func validateResult(g *plugins.Generation, unprovided []failureReport) error {
	var errs []string
	if n := len(g.Failures); n > 0 {
		errs = append(errs, fmt.Sprintf("%d of %d plugins failed to load", n, n+len(g.Plugins)))
	}
	if n := len(unprovided); n > 0 {
		verb := "import"
		if n == 1 {
			verb = "imports"
		}
		errs = append(errs, fmt.Sprintf("%s %s what this host does not provide", count(n, "plugin"), verb))
	}
	if len(errs) == 0 {
		return nil
	}
	return errors.New(strings.Join(errs, "; "))
}

// count is "1 tool", "2 tools", "0 tools".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 72 {
		s = s[:69] + "..."
	}
	return s
}

// LoadReport is validate --json's output: what a config loads, for
// scripts and editors. Tools carry their exposed (namespaced) names.
type LoadReport struct {
	OK       bool            `json:"ok"`
	Plugins  []pluginReport  `json:"plugins"`
	Failures []failureReport `json:"failures"`
}

type pluginReport struct {
	Name      string                 `json:"name"`
	ABI       int                    `json:"abi"`
	Source    string                 `json:"source,omitempty"`
	Path      string                 `json:"path,omitempty"`
	Signer    *source.Signer         `json:"signer,omitempty"` // who signed it, verified against [plugin.signature]
	Tools     []abi.Tool             `json:"tools"`
	Resources []abi.Resource         `json:"resources"`
	Templates []abi.ResourceTemplate `json:"resourceTemplates"`
	Prompts   []abi.Prompt           `json:"prompts"`
	// Hidden are the tools a filter left out (read_only, include_tools,
	// exclude_tools), each with the filter's key.
	Hidden []plugins.HiddenTool `json:"hidden"`
	// Skills are the URIs of the SKILL.md of the skills the plugin serves.
	Skills []string `json:"skills"`
}

type failureReport struct {
	Plugin string `json:"plugin"`
	Error  string `json:"error"`
}

func printJSON(w io.Writer, g *plugins.Generation) error {
	rep := LoadReport{OK: len(g.Failures) == 0, Plugins: []pluginReport{}, Failures: []failureReport{}}
	for _, p := range g.Plugins {
		pr := pluginReport{Name: p.Name, ABI: p.ABI, Source: p.Spec.Source, Path: p.Spec.Path, Signer: p.Signer(),
			Tools: []abi.Tool{}, Resources: []abi.Resource{}, Templates: []abi.ResourceTemplate{}, Prompts: []abi.Prompt{},
			Hidden: append([]plugins.HiddenTool{}, p.Hidden...), Skills: []string{}}
		for _, sk := range p.Skills {
			pr.Skills = append(pr.Skills, sk.URI)
		}
		for _, t := range p.Tools {
			d := t.Def
			d.Name = t.Name
			pr.Tools = append(pr.Tools, d)
		}
		for _, r := range p.Resources {
			pr.Resources = append(pr.Resources, r.Def)
		}
		for _, t := range p.Templates {
			pr.Templates = append(pr.Templates, t.Def)
		}
		for _, q := range p.Prompts {
			d := q.Def
			d.Name = q.Name
			pr.Prompts = append(pr.Prompts, d)
		}
		rep.Plugins = append(rep.Plugins, pr)
	}
	for _, f := range g.Failures {
		rep.Failures = append(rep.Failures, failureReport{Plugin: f.Plugin, Error: f.Err.Error()})
	}
	unprovided := unprovidedImports(g)
	rep.Failures = append(rep.Failures, unprovided...)
	rep.OK = len(rep.Failures) == 0
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return err
	}
	return validateResult(g, unprovided)
}
