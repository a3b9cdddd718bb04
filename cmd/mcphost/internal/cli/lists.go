package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mcphost/mcphost/plugins"
	"github.com/mcphost/mcphost/sandbox"
)

const listsMore = `FILE is a plugin's .wasm. lists says what its mcphost:lists section holds;
with --embed it loads the plugin with no config, env, secrets, mounts or
network, reads its lists and writes them into FILE's section, so that a
first start lists it without running it (docs/lists-section.md). mcphost's
own Go build does this; run it after any other build (the C,
AssemblyScript and TypeScript kits, a foreign .wasm). A plugin whose
lists depend on its config, env or secrets, or that fails to list
without them, gets a section that says dynamic: it is run to list, as
without a section.
`

func cmdLists(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("lists", stdout, stderr)
	fs.more = listsMore
	embed := fs.Bool("embed", false, "write the section into FILE (in place)")
	dynamic := fs.String("dynamic", "", "with --embed: say the lists are dynamic, and why (they are then never read from the section)")
	operands, err := fs.parseOperands(args)
	if err != nil {
		return err
	}
	var bad string
	switch {
	case len(operands) != 1:
		bad = fmt.Sprintf("want one FILE, got %d arguments", len(operands))
	case *dynamic != "" && !*embed:
		bad = "--dynamic says what --embed writes: add --embed"
	}
	if bad != "" {
		fmt.Fprintf(stderr, "mcphost lists: %s\n\n", bad)
		fs.Usage()
		return errUsage
	}
	file := operands[0]
	wasm, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if !*embed {
		info, found, err := plugins.ReadListsSection(wasm)
		switch {
		case err != nil:
			return fmt.Errorf("%s: its %s section would be ignored: %w", file, plugins.ListsSection, err)
		case !found:
			fmt.Fprintf(stdout, "%s: no %s section (write one with mcphost lists --embed %s)\n", file, plugins.ListsSection, file)
			return nil
		}
		printSection(stdout, file, info)
		return nil
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	eng, err := sandbox.NewEngine(ctx, sandbox.EngineOptions{CacheDir: filepath.Join(cacheRoot(), "wazero"), Logger: log})
	if err != nil {
		return fmt.Errorf("sandbox: %w", err)
	}
	defer eng.Close(context.WithoutCancel(ctx))
	l := plugins.NewLoader(plugins.LoaderOptions{Engine: eng, Logger: log})
	out, info, err := l.EmbedLists(ctx, pluginName(file), wasm, *dynamic)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if err := replaceFile(file, out); err != nil {
		return err
	}
	printSection(stdout, file, info)
	return nil
}

func printSection(w io.Writer, file string, info plugins.SectionInfo) {
	if info.Dynamic != "" {
		fmt.Fprintf(w, "%s: %s says dynamic: %s\n", file, plugins.ListsSection, info.Dynamic)
		return
	}
	fmt.Fprintf(w, "%s: %s holds %d tools, %d resources, %d resource templates, %d prompts (%d bytes)\n",
		file, plugins.ListsSection, info.Tools, info.Resources, info.Templates, info.Prompts, info.Bytes)
}

// pluginName names the plugin of file in logs: its base name.
func pluginName(file string) string {
	base := filepath.Base(file)
	return base[:len(base)-len(filepath.Ext(base))]
}

// replaceFile writes b over file atomically, keeping its mode.
func replaceFile(file string, b []byte) error {
	fi, err := os.Stat(file)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".lists-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	err = errors.Join(err, tmp.Chmod(fi.Mode().Perm()), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}
