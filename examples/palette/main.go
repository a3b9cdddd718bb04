package main

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
	_ "github.com/mcphost/mcphost/sdk-guest/stateless"
)

// appHTML is the palette tool's page: plain HTML and script, speaking the
// MCP Apps postMessage protocol by hand.
//
//go:embed app.html
var appHTML string

func main() {}

// PaletteIn is the palette tool's input.
type PaletteIn struct {
	Base  string `json:"base" jsonschema:"the base colour, #rrggbb"`
	Steps int    `json:"steps,omitempty" jsonschema:"how many shades, 2 to 10 (default 5)"`
}

// PaletteOut is the palette tool's structured result.
type PaletteOut struct {
	Base   string   `json:"base" jsonschema:"the base colour, #rrggbb"`
	Shades []string `json:"shades" jsonschema:"from the base colour towards white, #rrggbb"`
}

// MixIn is the mix tool's input.
type MixIn struct {
	A string `json:"a" jsonschema:"a colour, #rrggbb"`
	B string `json:"b" jsonschema:"another colour, #rrggbb"`
}

// MixOut is the mix tool's structured result.
type MixOut struct {
	Hex string `json:"hex" jsonschema:"the colour halfway between a and b, #rrggbb"`
}

func pure(title string) *abi.ToolAnnotations {
	return &abi.ToolAnnotations{Title: title, ReadOnlyHint: new(true), DestructiveHint: new(false),
		IdempotentHint: new(true), OpenWorldHint: new(false)}
}

func init() {
	guest.AddToolOut(guest.Tool{
		Name:        "palette",
		Title:       "Palette",
		Description: "Shades of a colour, from it towards white; clients that support MCP Apps show them as swatches.",
		Annotations: pure("Palette"),
		UI:          &guest.UI{HTML: appHTML},
	}, palette)
	guest.AddToolOut(guest.Tool{
		Name:        "mix",
		Title:       "Mix",
		Description: "The colour halfway between two colours.",
		Annotations: pure("Mix"),
	}, mix)
}

func palette(_ *guest.Context, in PaletteIn) (PaletteOut, error) {
	base, err := parseHex(in.Base)
	if err != nil {
		return PaletteOut{}, err
	}
	steps := in.Steps
	if steps == 0 {
		steps = 5
	}
	if steps < 2 || steps > 10 {
		return PaletteOut{}, fmt.Errorf("steps %d: want 2 to 10", steps)
	}
	out := PaletteOut{Base: formatHex(base)}
	for i := range steps {
		var c [3]int
		for k := range c {
			c[k] = base[k] + (255-base[k])*i/steps
		}
		out.Shades = append(out.Shades, formatHex(c))
	}
	return out, nil
}

func mix(_ *guest.Context, in MixIn) (MixOut, error) {
	a, err := parseHex(in.A)
	if err != nil {
		return MixOut{}, fmt.Errorf("a: %w", err)
	}
	b, err := parseHex(in.B)
	if err != nil {
		return MixOut{}, fmt.Errorf("b: %w", err)
	}
	var c [3]int
	for k := range c {
		c[k] = (a[k] + b[k] + 1) / 2
	}
	return MixOut{Hex: formatHex(c)}, nil
}

func parseHex(s string) ([3]int, error) {
	var c [3]int
	h, ok := strings.CutPrefix(s, "#")
	if !ok || len(h) != 6 {
		return c, fmt.Errorf("colour %q: want #rrggbb", s)
	}
	for k := range c {
		v, err := strconv.ParseUint(h[2*k:2*k+2], 16, 8)
		if err != nil {
			return c, fmt.Errorf("colour %q: want #rrggbb", s)
		}
		c[k] = int(v)
	}
	return c, nil
}

func formatHex(c [3]int) string { return fmt.Sprintf("#%02x%02x%02x", c[0], c[1], c[2]) }
