package wasip2

import (
	"maps"
	"slices"

	"github.com/mcphost/mcphost/sandbox/internal/component"
)

// addConfig serves wasi:config/store (and wasi:config/runtime, its
// earlier name) from the plugin's config table and its granted
// environment: wassette hands a policy's environment.allow keys to a
// component through this interface (its get-weather-js reads
// OPENWEATHER_API_KEY so), and mcphost grants them as env, so both are
// read here. A key in both is the config table's.
func addConfig(add func(iface, name string, f component.HostFunc)) {
	for _, iface := range []string{"wasi:config/store", "wasi:config/runtime"} {
		add(iface, "get", func(hc *component.HostCall, args []any) (any, error) {
			w := stateOf(hc)
			v, found := w.Config[args[0].(string)]
			if !found {
				v, found = w.Env[args[0].(string)]
			}
			if !found {
				return ok(component.Case{Index: 0}), nil
			}
			return ok(component.Case{Index: 1, Val: v}), nil
		})
		add(iface, "get-all", func(hc *component.HostCall, _ []any) (any, error) {
			return ok(configPairs(stateOf(hc))), nil
		})
	}
}

// configPairs is what wasi:config/store holds: the environment, then the
// config table over it, sorted by key.
func configPairs(w *State) []any {
	all := make(map[string]string, len(w.Env)+len(w.Config))
	maps.Copy(all, w.Env)
	maps.Copy(all, w.Config)
	out := make([]any, 0, len(all))
	for _, k := range slices.Sorted(maps.Keys(all)) {
		out = append(out, []any{k, all[k]})
	}
	return out
}
