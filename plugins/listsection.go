package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mcphost/mcphost/sandbox"
)

// The lists section. A plugin may carry its lists in a custom section of
// its own .wasm, [ListsSection], written after its build ([Loader.EmbedLists]:
// mcphost's Go build does it, `mcphost lists --embed` does it for any
// other); a start whose list cache has no entry for the plugin lists it
// from the section instead of running it, as from the list cache
// (lazy.go), and its first use checks the lists the same way: a
// difference rewrites the list cache entry and signals list_changed.
//
// The section was listed in an empty world: no config, env, secrets,
// mounts, network or key-value store. So it is used only for a plugin
// given none of config, env, secrets or mounts (what the list cache key
// holds beyond limits); any other is run to list it, as without a
// section. A guest that cannot list in the empty world gets a section
// that says dynamic, and why; so does one whose author says so
// (--dynamic). The format is in docs/lists-section.md.

// ListsSection is the name of the custom section that holds a plugin's
// lists.
const ListsSection = "mcphost:lists"

// listsSectionFormat changes when the section's meaning does; a section
// of another format is ignored, with a warning.
const listsSectionFormat = 1

// maxListsSection bounds the section's body: the lists of a plugin with
// hundreds of tools and their schemas fit in a fraction of it.
const maxListsSection = 4 << 20

// listsSectionBody is the section's JSON.
type listsSectionBody struct {
	Format int `json:"format"`
	// Dynamic, when not "", says why the section holds no lists: the
	// plugin is run to list it.
	Dynamic      string `json:"dynamic,omitempty"`
	ABI          int    `json:"abi,omitempty"`
	GuestVersion int    `json:"guestVersion,omitempty"`
	sandbox.Lists
}

// parseListsSection reads a section's body: untrusted bytes, bounded and
// checked before any of it is used.
func parseListsSection(body []byte) (*listsSectionBody, error) {
	if len(body) > maxListsSection {
		return nil, fmt.Errorf("%d bytes, more than the %d this mcphost reads", len(body), maxListsSection)
	}
	var s listsSectionBody
	if err := json.Unmarshal(body, &s); err != nil {
		return nil, fmt.Errorf("not the section's JSON: %w", err)
	}
	switch {
	case s.Format != listsSectionFormat:
		return nil, fmt.Errorf("format %d; this mcphost reads format %d", s.Format, listsSectionFormat)
	case s.Dynamic != "":
		return &s, nil
	case s.ABI != 1 && s.ABI != 2:
		return nil, fmt.Errorf("abi %d; lists come from guests of abi 1 or 2", s.ABI)
	}
	return &s, nil
}

// worldOf names what the empty world of a section lacks that lim gives
// the guest, or "" when it gives none of it.
func worldOf(lim sandbox.Limits) string {
	var has []string
	for _, w := range []struct {
		name string
		n    int
	}{{"config", len(lim.Config)}, {"env", len(lim.Env)}, {"secrets", len(lim.Secrets)},
		{"allowed_paths", len(lim.AllowedPaths) + len(lim.MayRequestPaths)}} {
		if w.n > 0 {
			has = append(has, w.name)
		}
	}
	return strings.Join(has, ", ")
}

// sectionLists returns the lists wasm's section holds for a plugin given
// lim, or nil, saying why when it has a section it does not use. What it
// returns goes into the list cache under key, as a listing would: the
// next start finds it there, and the first use checks it either way.
func (l *Loader) sectionLists(name string, wasm []byte, lim sandbox.Limits, key string) *listEntry {
	body, found, err := sandbox.CustomSection(wasm, ListsSection)
	if err == nil && found {
		var s *listsSectionBody
		if s, err = parseListsSection(body); err == nil {
			e := l.useSection(name, s, lim)
			if e != nil {
				l.saveLists(key, e)
			}
			return e
		}
	}
	if err != nil {
		// Like a list cache entry that does not parse: the section is a
		// hint, and the guest itself can still say what it lists.
		l.log.Warn("lists section ignored: it does not read; the plugin is run to list it (write it again with mcphost lists --embed)",
			"plugin", name, "section", ListsSection, "err", err)
	}
	return nil
}

func (l *Loader) useSection(name string, s *listsSectionBody, lim sandbox.Limits) *listEntry {
	if s.Dynamic != "" {
		l.log.Debug("lists section says the lists are dynamic; the plugin is run to list it", "plugin", name, "reason", s.Dynamic)
		return nil
	}
	if w := worldOf(lim); w != "" {
		l.log.Debug("lists section not used: it was listed without what the plugin is given; the plugin is run to list it", "plugin", name, "given", w)
		return nil
	}
	return &listEntry{Format: listCacheFormat, ABI: s.ABI, GuestVersion: s.GuestVersion, Lists: s.Lists}
}

// SectionInfo says what a lists section written by [Loader.EmbedLists]
// holds.
type SectionInfo struct {
	Dynamic                              string // why it holds no lists, or ""
	Tools, Resources, Templates, Prompts int
	Bytes                                int // the section body's size
}

// EmbedLists returns wasm with a lists section ([ListsSection]) in place
// of any it had: the lists the guest returns when loaded in an empty
// world (no config, env, secrets, mounts, network or key-value store),
// or, when dynamic is not "" or the guest fails to list there, a section
// that says dynamic and why. It fails when the module does not load,
// when it lists more than the section may hold, or without an Engine.
func (l *Loader) EmbedLists(ctx context.Context, name string, wasm []byte, dynamic string) ([]byte, SectionInfo, error) {
	s := listsSectionBody{Format: listsSectionFormat, Dynamic: dynamic}
	if dynamic == "" {
		e, err := l.emptyWorldLists(ctx, name, wasm)
		var lerr *listError
		switch {
		case errors.As(err, &lerr):
			s.Dynamic = "listing without config, env or secrets failed: " + lerr.Error()
		case err != nil:
			return nil, SectionInfo{}, err
		default:
			s.ABI, s.GuestVersion, s.Lists = e.ABI, e.GuestVersion, e.Lists
		}
	}
	body, err := json.Marshal(&s)
	if err != nil {
		return nil, SectionInfo{}, err
	}
	if len(body) > maxListsSection {
		return nil, SectionInfo{}, fmt.Errorf("the lists take %d bytes, more than a section may hold (%d): mark the plugin dynamic", len(body), maxListsSection)
	}
	out, err := sandbox.WithCustomSection(wasm, ListsSection, body)
	if err != nil {
		return nil, SectionInfo{}, err
	}
	return out, s.info(len(body)), nil
}

func (s *listsSectionBody) info(size int) SectionInfo {
	return SectionInfo{Dynamic: s.Dynamic, Tools: len(s.Tools), Resources: len(s.Resources), Templates: len(s.Templates),
		Prompts: len(s.Prompts), Bytes: size}
}

// listError is a guest that loaded and failed to list.
type listError struct{ err error }

func (e *listError) Error() string { return e.err.Error() }
func (e *listError) Unwrap() error { return e.err }

// emptyWorldLists loads wasm with no inputs, on the interpreter and
// without compiling it for later (its code, with the section, will
// differ: sandbox.Limits.ListOnly), and reads its lists as a first load
// does.
func (l *Loader) emptyWorldLists(ctx context.Context, name string, wasm []byte) (*listEntry, error) {
	if l.load == nil {
		return nil, errors.New("no sandbox engine to load Wasm with")
	}
	m, err := l.load(ctx, name, wasm, sandbox.Limits{Instances: 1, ListOnly: true})
	if err != nil {
		return nil, err
	}
	defer m.Close(context.WithoutCancel(ctx))
	c := &core{name: name, module: m, log: l.log}
	e, err := l.inspect(ctx, c)
	if err != nil {
		return nil, &listError{err}
	}
	return e, nil
}

// firstLoadKey marks the context of a plugin's first load (a first
// start, a plugin added), whose Go build writes the lists section.
type firstLoadKey struct{}

func withFirstLoad(ctx context.Context) context.Context {
	return context.WithValue(ctx, firstLoadKey{}, true)
}

// embedBuilt is the step after a Go build of mcphost's (source.BuildOptions.AfterBuild):
// it writes the lists section into the built file. A failure is logged
// and leaves the file as built: its plugin is run to list it. A build
// for a reload (an author's save) writes none: the save-to-served time
// would pay for a load that only a first start uses, and the list cache
// holds what the reload lists.
func (l *Loader) embedBuilt(name string) func(ctx context.Context, file string) error {
	if l.load == nil {
		return nil
	}
	return func(ctx context.Context, file string) error {
		if ctx.Value(firstLoadKey{}) == nil {
			l.log.Debug("lists section not written: a build for a reload; the list cache keeps its lists", "plugin", name)
			return nil
		}
		wasm, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		out, info, err := l.EmbedLists(ctx, name, wasm, "")
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			l.log.Warn("lists section not written; the plugin is run to list it on a first start", "plugin", name, "err", err)
			return nil
		}
		if err := os.WriteFile(file, out, 0o600); err != nil {
			return err
		}
		l.log.Debug("lists section written", "plugin", name, "tools", info.Tools, "dynamic", info.Dynamic)
		return nil
	}
}

// ReadListsSection says what wasm's lists section holds; found is false
// when it has none. The error is why a start would ignore it.
func ReadListsSection(wasm []byte) (info SectionInfo, found bool, err error) {
	body, found, err := sandbox.CustomSection(wasm, ListsSection)
	if err != nil || !found {
		return SectionInfo{}, found, err
	}
	s, err := parseListsSection(body)
	if err != nil {
		return SectionInfo{}, true, err
	}
	return s.info(len(body)), true, nil
}
