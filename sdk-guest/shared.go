package guest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/mcphost/mcphost/abi"
)

// Shared tools. A tool that a handler adds with AddTool lives in the
// instance that ran the handler: a Go closure cannot leave it, so another
// instance (the next one after a fault, or the plugin's instance on
// another replica of the server) does not have it. A SharedTools kind
// turns such a tool into data: the handler adds a value of the kind's
// type, the SDK keeps it in the plugin's KV (which every replica reaches
// through the server's store), and every instance builds the same tool
// from it with the kind's build function, registered in init like any
// tool. An instance catches up when its lists are read (the host re-reads
// a plugin's lists on every replica when the plugin says they changed)
// and when it is asked for a tool it does not have.

// The KV keys shared tools use, in the plugin's own key space.
const (
	sharedToolPrefix = "guest.tool:" // one record per tool, named after it
	sharedToolsKey   = "guest.tools" // a counter every change increments
)

// sharedKeysPage is how many keys a catch-up asks for at a time.
const sharedKeysPage = 1000

// SharedTools is a kind of tool that handlers add at run time and that
// every instance of the plugin serves, on every replica: see
// [NewSharedTools].
type SharedTools[D any] struct{ kind string }

// NewSharedTools registers a kind of shared tool; call it from init or a
// package-level variable, like AddTool. build turns a value of D into a
// tool by calling [AddTool], [AddToolOut] or [AddToolRaw] exactly once,
// and nothing else that lasts: it runs in every instance that serves the
// tool, each time it catches up.
//
//	type Alias struct{ Name, Text string }
//
//	var aliases = guest.NewSharedTools("alias", func(a Alias) {
//		guest.AddTool(guest.Tool{Name: a.Name, Description: "Says " + a.Text},
//			func(*guest.Context, struct{}) (*guest.Result, error) { return guest.TextResult(a.Text), nil })
//	})
//
// A handler then calls aliases.Add(Alias{…}). The values are kept in the
// plugin's KV under keys starting "guest.tool" and count against its
// kv_max_keys and kv_max_bytes; D must survive a JSON round trip, since
// every instance builds from the JSON. Registering a kind twice panics.
func NewSharedTools[D any](kind string, build func(D)) *SharedTools[D] {
	std.sharedKind(kind, func(data json.RawMessage) error {
		var d D
		if err := json.Unmarshal(data, &d); err != nil {
			return fmt.Errorf("decode %s: %w", kind, err)
		}
		build(d)
		return nil
	})
	return &SharedTools[D]{kind: kind}
}

// Add builds the tool d describes, keeps d in the plugin's KV so that
// every instance builds it too, serves it here, and tells the host the
// tool list changed (so every replica re-reads it). It returns the tool's
// name. It fails, adding nothing, when build does not register exactly
// one tool or the KV cannot be written (the store is down, or a quota is
// reached: the error says which). A second Add under the same name
// replaces the tool everywhere.
func (s *SharedTools[D]) Add(d D) (string, error) {
	data, err := json.Marshal(d)
	if err != nil {
		return "", fmt.Errorf("guest: shared tool %s: encode: %w", s.kind, err)
	}
	return std.shared.add(std, s.kind, data)
}

// Remove removes the shared tool called name from the plugin's KV and
// from this instance, and tells the host the tool list changed; the other
// instances drop it when they catch up. Removing a tool that is not there
// is not an error.
func (s *SharedTools[D]) Remove(name string) error {
	return std.shared.remove(std, name)
}

// sharedTools is the shared-tool state of one registry (one instance).
type sharedTools struct {
	mu      sync.Mutex // one add, remove or catch-up at a time
	kinds   map[string]func(json.RawMessage) error
	applied map[string]string // tool name → the record it was built from
	seen    int64             // the sharedToolsKey value this instance caught up with
}

type sharedRecord struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

// sharedKind registers a kind. Only a plugin that does has a catch-up
// (r.catchUp), so a plugin that never calls NewSharedTools never calls
// guest.KV and does not import the kv host function.
func (r *registry) sharedKind(kind string, build func(json.RawMessage) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shared == nil {
		r.shared = &sharedTools{kinds: map[string]func(json.RawMessage) error{}, applied: map[string]string{}}
		r.catchUp = func() {
			if err := r.shared.catchUp(r); err != nil {
				Logf(LevelWarning, "shared tools not caught up; this instance serves the ones it has: %v", err)
			}
		}
	}
	if _, dup := r.shared.kinds[kind]; dup {
		panic(fmt.Sprintf("guest: shared tool kind %q registered twice", kind))
	}
	r.shared.kinds[kind] = build
}

// build runs kind's build on data and returns the one tool it registered,
// without registering it.
func (st *sharedTools) build(r *registry, kind string, data json.RawMessage) (e *toolEntry, err error) {
	b := st.kinds[kind]
	if b == nil {
		return nil, fmt.Errorf("unknown kind %q (a newer version of the plugin may have added it)", kind)
	}
	r.mu.Lock()
	r.capture = []*toolEntry{}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		got := r.capture
		r.capture = nil
		r.mu.Unlock()
		if p := recover(); p != nil {
			err = fmt.Errorf("build %s: panic: %v", kind, p)
		}
		if err == nil && len(got) != 1 {
			err = fmt.Errorf("build %s registered %d tools; want 1", kind, len(got))
		}
		if err == nil {
			e = got[0]
		}
	}()
	return nil, b(data)
}

func (st *sharedTools) add(r *registry, kind string, data json.RawMessage) (string, error) {
	if st == nil {
		return "", errors.New("guest: shared tools: no kind registered (NewSharedTools)")
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	e, err := st.build(r, kind, data)
	if err != nil {
		return "", fmt.Errorf("guest: shared tool not added: %w", err)
	}
	name := e.def.Name
	rec, err := json.Marshal(sharedRecord{Kind: kind, Data: data})
	if err != nil {
		return "", fmt.Errorf("guest: shared tool %q not added: %w", name, err)
	}
	if err := KV.Set(sharedToolPrefix+name, rec); err != nil {
		return "", fmt.Errorf("guest: shared tool %q not added: %w", name, err)
	}
	if err := st.bump(); err != nil {
		// Kept, but no instance would look for it: take it back.
		if derr := KV.Delete(sharedToolPrefix + name); derr != nil {
			err = errors.Join(err, derr)
		}
		return "", fmt.Errorf("guest: shared tool %q not added: %w", name, err)
	}
	r.putTool(e)
	st.applied[name] = string(rec)
	notifyToolsChanged()
	return name, nil
}

func (st *sharedTools) remove(r *registry, name string) error {
	if st == nil {
		return errors.New("guest: shared tools: no kind registered (NewSharedTools)")
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := KV.Delete(sharedToolPrefix + name); err != nil {
		return fmt.Errorf("guest: shared tool %q not removed: %w", name, err)
	}
	if err := st.bump(); err != nil {
		return fmt.Errorf("guest: shared tool %q removed from the KV, but other instances are not told: %w", name, err)
	}
	if _, ok := st.applied[name]; ok {
		r.removeTool(name)
		delete(st.applied, name)
	}
	notifyToolsChanged()
	return nil
}

// bump increments the change counter; when no other instance changed
// anything since this one caught up, this instance is caught up still.
func (st *sharedTools) bump() error {
	n, err := KV.Increment(sharedToolsKey, 1)
	if err != nil {
		return err
	}
	if n == st.seen+1 {
		st.seen = n
	}
	return nil
}

// catchUp builds the shared tools this instance lacks or has in another
// version, and drops those no longer kept. It costs one KV read when
// nothing changed since the last catch-up. A record this instance cannot
// build (a kind it does not know, a build that fails) is logged and
// skipped.
func (st *sharedTools) catchUp(r *registry) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	// The counter is read before the records, and writers bump it after
	// writing theirs: a change this walk misses bumps it past seen.
	v, ok, err := KV.Get(sharedToolsKey)
	if err != nil {
		return err
	}
	var n int64
	if ok {
		if n, err = strconv.ParseInt(string(v), 10, 64); err != nil {
			return fmt.Errorf("%s: %w", sharedToolsKey, err)
		}
	}
	if n == st.seen {
		return nil
	}
	kept := map[string]string{}
	cursor := ""
	for {
		var rep abi.KVReply
		if rep, err = kvCall(abi.KVRequest{Op: abi.KVKeys, Cursor: cursor, Limit: sharedKeysPage}); err != nil {
			return err
		}
		for _, k := range rep.Keys {
			name, ok := strings.CutPrefix(k, sharedToolPrefix)
			if !ok {
				continue
			}
			rec, found, err := KV.Get(k)
			if err != nil {
				return err
			}
			if found {
				kept[name] = string(rec)
			}
		}
		if cursor = rep.Cursor; cursor == "" {
			break
		}
	}
	for name, rec := range kept {
		if st.applied[name] == rec {
			continue
		}
		e, err := st.rebuild(r, name, rec)
		if err != nil {
			Logf(LevelWarning, "shared tool %q not served by this instance: %v", name, err)
			continue
		}
		r.putTool(e)
		st.applied[name] = rec
	}
	for name := range st.applied {
		if _, ok := kept[name]; !ok {
			r.removeTool(name)
			delete(st.applied, name)
		}
	}
	st.seen = n
	return nil
}

// rebuild builds the tool called name from its record.
func (st *sharedTools) rebuild(r *registry, name, rec string) (*toolEntry, error) {
	var sr sharedRecord
	if err := json.Unmarshal([]byte(rec), &sr); err != nil {
		return nil, err
	}
	e, err := st.build(r, sr.Kind, sr.Data)
	if err != nil {
		return nil, err
	}
	if e.def.Name != name {
		return nil, fmt.Errorf("built a tool called %q", e.def.Name)
	}
	return e, nil
}

// notifyToolsChanged tells the host, which re-reads the plugin's tools on
// every replica; a host that cannot hear it is logged.
func notifyToolsChanged() {
	if err := NotifyToolListChanged(); err != nil {
		Logf(LevelWarning, "shared tools changed, but the host was not told; other replicas see the change at their next re-read: %v", err)
	}
}

// catchUpShared catches up with the shared tools, when the plugin has a
// kind of them, and reports whether it does.
func (r *registry) catchUpShared() bool {
	r.mu.RLock()
	f := r.catchUp
	r.mu.RUnlock()
	if f == nil {
		return false
	}
	f()
	return true
}
