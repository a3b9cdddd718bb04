package sandbox

import (
	"context"
	"strings"
	"testing"
)

// configCall is one call of the config component and what it answers.
type configCall struct {
	tool, args, text string
	isError          bool
}

// TestComponentConfigStore runs the C component config, which reads
// wasi:config/store@0.2.0-draft as wassette's components do: get and
// get-all serve the plugin's config table and its granted environment
// (the config table's value when a key is in both), and nothing else. It
// logs each key it reads through wasi:logging.
func TestComponentConfigStore(t *testing.T) {
	wasm := componentWasm(t, "config")
	for _, tt := range []struct {
		name  string
		lim   Limits
		calls []configCall
	}{
		{"env and config", Limits{
			Env:    map[string]string{"OPENWEATHER_API_KEY": "k-from-env", "SHARED": "env"},
			Config: map[string]string{"greeting": "grüß dich", "SHARED": "config"},
		}, []configCall{
			{"config-get", `{"key":"OPENWEATHER_API_KEY"}`, "k-from-env", false},
			{"config-get", `{"key":"greeting"}`, "grüß dich", false},
			{"config-get", `{"key":"SHARED"}`, "config", false},
			{"config-get", `{"key":"HOME"}`, "not set", true},
			{"config-get", `{"key":""}`, "not set", true},
			{"config-all", `{}`, "OPENWEATHER_API_KEY=k-from-env\nSHARED=config\ngreeting=grüß dich\n", false},
		}},
		{"nothing granted", Limits{}, []configCall{
			{"config-get", `{"key":"OPENWEATHER_API_KEY"}`, "not set", true},
			{"config-all", `{}`, "", false},
		}},
		{"an empty value", Limits{Env: map[string]string{"EMPTY": ""}}, []configCall{
			{"config-get", `{"key":"EMPTY"}`, "", false},
			{"config-all", `{}`, "EMPTY=\n", false},
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			lim := tt.lim
			lim.Instances = 1
			m, err := testEngine.Load(context.Background(), "config", wasm, lim)
			if err != nil {
				t.Fatal(err)
			}
			defer m.Close(context.Background())
			// The key is logged through wasi:logging, with the plugin's name.
			key := "MCPHOST_LOGGED_" + strings.ToUpper(strings.ReplaceAll(tt.name, " ", "_"))
			componentCall(t, m, "config-get", `{"key":"`+key+`"}`)
			if !testLogs.LineContains("level=INFO", `msg="guest log"`, "text="+key, "context=config", "plugin=config") {
				t.Errorf("no log line for %s through wasi:logging", key)
			}
			for _, c := range tt.calls {
				res, err := componentCall(t, m, c.tool, c.args)
				if err != nil {
					t.Errorf("%s(%s): %v", c.tool, c.args, err)
					continue
				}
				got := ""
				if len(res.Content) == 1 {
					got = res.Content[0].Text
				}
				if res.IsError != c.isError || len(res.Content) != 1 || got != c.text {
					t.Errorf("%s(%s): got %q (isError %v, %+v); want %q (isError %v)", c.tool, c.args, got, res.IsError, res, c.text, c.isError)
				}
			}
		})
	}
}
