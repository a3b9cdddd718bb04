package consent

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/mcphost/mcphost/sandbox"
)

// Decisions a person can give.
const (
	AllowOnce   = "allow_once"
	AllowAlways = "allow_always"
	Deny        = "deny"
)

// Decider is the [sandbox.Consent] of one plugin's code: give each module
// the Decider that [Decider.For] returns for the code it runs.
type Decider struct {
	grants *Grants
	log    *slog.Logger
	code   Code // what grants are given to
}

// New returns a Decider that keeps allow_always answers in grants (nil:
// there is nowhere to keep them, and such an answer allows one call) and
// logs each decision to log.
func New(grants *Grants, log *slog.Logger) *Decider {
	if log == nil {
		log = slog.Default()
	}
	return &Decider{grants: grants, log: log}
}

// For returns c for the plugin running code.
func (c *Decider) For(code Code) *Decider {
	cc := *c
	cc.code = code
	return &cc
}

// onceKey carries the targets allowed once during one module call.
type onceKey struct{}

// IsOnceKey reports whether key is the one a module call's allow_once
// answers are asked by: every call of a module whose Limits.Consent is a
// Decider runs with a context that answers it with the call's own *[Once]
// (plugins' moduleCall), or allow_once allows nothing beyond the one
// reach it was asked for.
func IsOnceKey(key any) bool { _, ok := key.(onceKey); return ok }

// OnceFrom returns the allow_once answers of the module call of ctx (a
// context answering [IsOnceKey]), or nil.
func OnceFrom(ctx context.Context) *Once {
	o, _ := ctx.Value(onceKey{}).(*Once)
	return o
}

// Once is a module call's allow_once answers. Its zero value is empty
// and ready to use.
type Once struct {
	mu      sync.Mutex
	targets map[string]bool
}

func (s *Once) has(target string) bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.targets[target]
}

func (s *Once) add(target string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.targets == nil {
		s.targets = map[string]bool{}
	}
	s.targets[target] = true
}

// Allow implements sandbox.Consent, for a host and for a path alike:
// see the package doc for the order in which it decides.
func (c *Decider) Allow(ctx context.Context, r sandbox.Reach) error {
	a := askingFor(r)
	once := OnceFrom(ctx)
	if once.has(a.once) || r.Path != "" && !r.Write && once.has("write:"+r.Path) {
		return nil
	}
	if c.grants != nil {
		ok, err := c.grants.HasContext(ctx, r, c.code)
		if ok {
			return nil
		}
		if err != nil {
			c.log.Error("consent: the grants could not be read; no standing grant applies, so the person is asked", append(a.log, "err", err)...)
		}
	}
	if c.grants != nil {
		if gr, ok := c.grants.Other(r, c.code); ok {
			attrs := append(a.log, "granted_code", gr.Code, "code", c.code.Digest, "file", c.grants.File())
			if gr.Code == "" {
				c.log.Warn("consent: the grant was written before grants named the code they were given to; the person is asked again", attrs...)
			} else {
				c.log.Warn("consent: the grant was given to other code under this plugin's name; the person is asked again", attrs...)
			}
		}
	}
	what := "host " + a.target + " is not in allowed_hosts"
	if r.Path != "" {
		what = "path " + a.target + " is not in allowed_paths"
	}
	edit := fmt.Sprintf("add %q to %s in [[plugin]] %s", a.target, a.key, r.Plugin)
	peer := sandbox.PeerFrom(ctx)
	if peer == nil {
		return fmt.Errorf("%s and no client is attached to ask a person; %s", what, edit)
	}
	kept := GrantsFileName
	if c.grants != nil && c.grants.Shared() {
		kept = "the server's shared store"
	}
	res, err := peer.Request(ctx, "elicitation/create", question(r.Plugin, a, kept))
	switch {
	case err != nil && ctx.Err() != nil:
		c.log.Warn("consent: no answer before the call ended; refused", append(a.log, "err", err)...)
		return fmt.Errorf("%s and no one answered before the call ended; %s", what, edit)
	case err != nil:
		// Also the stateless era's first round: the question goes out
		// as input_required and the call runs again with the answer.
		c.log.Info("consent: the client was not asked, or not answered yet; refused for now", append(a.log, "err", err)...)
		return fmt.Errorf("%s and a person could not be asked (%v); %s", what, err, edit)
	}
	decision, err := parseDecision(res)
	if err != nil {
		c.log.Warn("consent: refused", append(a.log, "answer", err)...)
		return fmt.Errorf("%s and the person %v; %s", what, err, edit)
	}
	switch decision {
	case AllowOnce:
		once.add(a.once)
		c.log.Info("consent: allowed once", a.log...)
		return nil
	case AllowAlways:
		once.add(a.once)
		if c.grants == nil {
			c.log.Warn("consent: allowed, but there is no grants file to keep it in; allowed once", a.log...)
			addNote(ctx, notKept(r.Plugin, a, "there is no grants file to keep it in", edit))
			return nil
		}
		if err := c.grants.Grant(ctx, r, c.code, time.Now()); err != nil {
			c.log.Error("consent: allowed, but the grant was not saved; allowed once", append(a.log, "err", err)...)
			fix := "make its directory writable, or " + edit
			if c.grants.Shared() {
				fix = "answer again once the store answers (mcphost reconnects by itself), or " + edit
			}
			addNote(ctx, notKept(r.Plugin, a, fmt.Sprintf("%s could not be written: %v", c.grants.File(), err), fix))
			return nil
		}
		c.log.Info("consent: granted for good", append(a.log, "file", c.grants.File(), "code", c.code.Digest)...)
		return nil
	}
	c.log.Info("consent: denied", a.log...)
	return fmt.Errorf("%s and a person denied it; %s", what, edit)
}
