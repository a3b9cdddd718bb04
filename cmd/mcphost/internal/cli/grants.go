package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/consent"
	"github.com/mcphost/mcphost/plugins/store"
)

const grantsUsage = `usage: mcphost grants list [--config FILE] [--store URL]
       mcphost grants revoke PLUGIN [HOST:PORT|PATH] [--config FILE] [--store URL]

A grant lets a plugin connect to a host its allowed_hosts does not allow,
or read (or read and write) a may_request_paths directory its
allowed_paths does not hold.
Only a person makes one, by answering allow_always when mcphost asks
through the client (elicitation); no tool, resource or prompt can. Grants
live in plugins.grants.toml beside plugins.toml; a running server reads
the file again when it changes. With a store (--store URL, else
MCPHOST_STORE, else the config's [server] store) they live in the store,
shared by every replica, and a revoke stands on every replica at its next
check.

list    prints every grant: plugin, host:port or directory, what it allows
        (connect, read or write), when it was given, and the code it was
        given to (its sha256, cut short, and its signer when signed): a
        grant stands for that code only, and other code is asked again
revoke  removes PLUGIN's grant for HOST:PORT or PATH, or all of PLUGIN's grants
`

func cmdGrants(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, err := newGroupFlags("grants", grantsUsage, args, stdout, stderr)
	if err != nil {
		return err
	}
	var c common
	c.register(fs)
	storeURL := fs.String("store", "", "the store the grants live in (default: $"+store.EnvURL+", else [server] store of the config)")
	operands, err := fs.parseOperands(args[1:])
	if err != nil {
		return err
	}
	g, closeStore, err := openGrants(ctx, c.config, *storeURL)
	if err != nil {
		return err
	}
	defer closeStore()
	switch args[0] {
	case "list":
		if len(operands) > 0 {
			return fmt.Errorf("unexpected arguments %q", operands)
		}
		if err := g.ReloadContext(ctx); err != nil {
			return err
		}
		list := g.List()
		if len(list) == 0 {
			fmt.Fprintf(stdout, "no grants in %s\n", g.File())
			return nil
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PLUGIN\tTARGET\tALLOWS\tGRANTED\tCODE\tSIGNER")
		for _, gr := range list {
			code := cmp.Or(consent.ShortDigest(gr.Code), "(none: asked again)")
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", gr.Plugin, gr.Target(), gr.Allows(), gr.Granted.Format(time.RFC3339), code, cmp.Or(gr.Signer, "-"))
		}
		return tw.Flush()
	case "revoke":
		if len(operands) < 1 || len(operands) > 2 {
			fmt.Fprint(stderr, grantsUsage)
			return errUsage
		}
		plugin, target := operands[0], ""
		if len(operands) == 2 {
			target = operands[1]
		}
		gone, err := g.Revoke(ctx, plugin, target)
		if err != nil {
			return err
		}
		if len(gone) == 0 {
			what := "no grants"
			if target != "" {
				what = "no grant for " + target
			}
			return fmt.Errorf("plugin %q has %s in %s ('mcphost grants list' shows them)", plugin, what, g.File())
		}
		for _, gr := range gone {
			if gr.Path != "" {
				fmt.Fprintf(stdout, "revoked: %s may no longer %s files in %s\n", gr.Plugin, gr.Access, gr.Path)
				continue
			}
			fmt.Fprintf(stdout, "revoked: %s may no longer connect to %s\n", gr.Plugin, gr.Host)
		}
		return nil
	}
	fmt.Fprint(stderr, grantsUsage)
	return errUsage
}

// openGrants opens the grants serve would use: in the store flag names
// (else MCPHOST_STORE, else the config's [server] store: storeURL), or else
// in the file beside the config --config names (or ./plugins.toml, as
// serve finds it). The caller calls closeStore when done.
func openGrants(ctx context.Context, configFile, flag string) (g *consent.Grants, closeStore func(), err error) {
	if configFile == "" {
		if _, err := os.Stat("plugins.toml"); err == nil {
			configFile = "plugins.toml"
		}
	}
	var cfg *config.Config
	if storeURL(flag, nil) == "" && configFile != "" {
		if cfg, err = plugins.LoadConfig(configFile); err != nil {
			return nil, nil, err
		}
	}
	if url := storeURL(flag, cfg); url != "" {
		st, err := store.Open(url)
		if err != nil {
			return nil, nil, fmt.Errorf("--store: %w", err)
		}
		s := &sharedStore{Store: st, url: url}
		return s.grants(), func() { st.Close() }, nil
	}
	if configFile == "" {
		return nil, nil, errors.New("no plugins.toml here, no --config and no store given: grants live beside plugins.toml, or in the store ([server] store, " + store.EnvURL + ")")
	}
	g, err = consent.OpenGrants(consent.GrantsFile(configFile))
	return g, func() {}, err
}
