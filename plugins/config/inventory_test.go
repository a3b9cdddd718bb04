package config

import (
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/sandbox/limits"
)

// keySamples gives every key of plugins.toml a value, as the table it
// goes in: TestInventory parses each and looks for where the paths land.
// A key the parser accepts without a sample here fails the test.
var keySamples = map[string]string{
	// [server]
	"server.name": `name = "x"`, "server.instructions": `instructions = "x"`, "server.page_size": `page_size = 5`,
	"server.max_message_bytes": `max_message_bytes = "1MiB"`, "server.startup_wait": `startup_wait = "1s"`,
	"server.shutdown_grace": `shutdown_grace = "1s"`, "server.cache_ttl": `cache_ttl = "1s"`, "server.cache_scope": `cache_scope = "public"`,
	"server.request_state_key_env": `request_state_key_env = "K"`, "server.task_ttl": `task_ttl = "1m"`,
	"server.task_max_bytes": `task_max_bytes = "1MiB"`, "server.task_after": `task_after = "1s"`,
	"server.plugin_dir": `plugin_dir = "drop"`, "server.timeout": `timeout = "1s"`, "server.cancel_grace": `cancel_grace = "1s"`, "server.load_timeout": `load_timeout = "1s"`,
	"server.memory": `memory = "64MiB"`, "server.max_instances": `max_instances = 2`, "server.runtime": `runtime = "native"`,
	"server.store": `store = "redis://127.0.0.1:1/0"`, "server.go": `go = "bin/go"`, "server.strict_schemas": `strict_schemas = true`,
	"server.secrets_file": `secrets_file = "secrets.env"`, "server.body_timeout": `body_timeout = "1s"`,
	"server.max_in_flight_per_session": `max_in_flight_per_session = 2`, "server.max_in_flight_per_client": `max_in_flight_per_client = 2`,
	"server.max_sessions": `max_sessions = 2`, "server.trusted_proxies": `trusted_proxies = ["10.0.0.0/8"]`,
	"server.rate_per_client": `rate_per_client = "10/s"`, "server.drain_grace": `drain_grace = "1s"`, "server.read_only": `read_only = true`,

	// [[plugin]] (after name = "p"; path = "p.wasm" unless the sample sets a source)
	"plugin.name": ``, "plugin.path": ``, "plugin.source": `source = "src"`, "plugin.sha256": `sha256 = "` + strings.Repeat("ab", 32) + `"`,
	"plugin.timeout": `timeout = "1s"`, "plugin.cancel_grace": `cancel_grace = "1s"`, "plugin.load_timeout": `load_timeout = "1s"`, "plugin.memory": `memory = "64MiB"`,
	"plugin.max_instances": `max_instances = 2`, "plugin.runtime": `runtime = "native"`, "plugin.policy": `policy = "policy.yaml"`,
	"plugin.allowed_hosts": `allowed_hosts = ["a.example"]`, "plugin.may_request_hosts": `may_request_hosts = ["b.example"]`,
	"plugin.allow_private_networks": `allow_private_networks = true`, "plugin.allowed_paths": `allowed_paths = ["data:/d:ro"]`,
	"plugin.may_request_paths": `may_request_paths = ["data:/m"]`, "plugin.env": `env = { A = "b" }`, "plugin.config": `config = { a = "b" }`,
	"plugin.include_tools": `include_tools = ["a*"]`, "plugin.exclude_tools": `exclude_tools = ["b*"]`, "plugin.task_tools": `task_tools = ["c*"]`,
	"plugin.tool_prefix": `tool_prefix = "x_"`, "plugin.cache_ttl": `cache_ttl = "1s"`, "plugin.cache_scope": `cache_scope = "public"`,
	"plugin.ui":          "[plugin.ui]\ntools = { t = \"page.html\" }\ncsp_connect = [\"https://a.example\"]",
	"plugin.kv_max_keys": `kv_max_keys = 5`, "plugin.kv_max_bytes": `kv_max_bytes = "1MiB"`, "plugin.strict_schemas": `strict_schemas = true`,
	"plugin.allowed_secrets": `allowed_secrets = ["S"]`, "plugin.secrets_file": `secrets_file = "secrets.env"`, "plugin.read_only": `read_only = true`,
	"plugin.skills": `skills = ["skills/*"]`,
	"plugin.url":    `url = "https://example.com/p.wasm"` + "\n" + `sha256 = "` + strings.Repeat("ab", 32) + `"`,
	"plugin.oci":    `oci = "ghcr.io/example/p@sha256:` + strings.Repeat("ab", 32) + `"`,
	// trusted_root needs a real Sigstore root to parse; TestInventory
	// checks its field's tag instead.
	"plugin.signature":     "oci = \"ghcr.io/example/p:1\"\n[plugin.signature]\nkey = \"cosign.pub\"",
	"plugin.signature_url": "url = \"https://example.com/p.wasm\"\nsignature_url = \"https://example.com/p.b\"\n[plugin.signature]\nkey = \"cosign.pub\"",
	"plugin.build":         "path = \"out/p.wasm\"\nbuild = \"make\"", "plugin.watch": "path = \"out/p.wasm\"\nbuild = \"make\"\nwatch = [\"lib/*.c\"]",
	"plugin.dir": "path = \"out/p.wasm\"\nbuild = \"make\"\ndir = \"bdir\"",
	"mount.host": `allowed_paths = [{ host = "data" }]`, "mount.guest": `allowed_paths = [{ host = "data", guest = "/g" }]`,
	"mount.read_only": `allowed_paths = [{ host = "data", read_only = true }]`, "mount.allow_root": `allowed_paths = [{ host = "/", allow_root = true, read_only = true }]`,
	"signature.identity": "oci = \"ghcr.io/example/p:1\"\n[plugin.signature]\nidentity = \"i\"\nissuer = \"https://i.example\"",
	"signature.issuer":   "oci = \"ghcr.io/example/p:1\"\n[plugin.signature]\nidentity = \"i\"\nissuer = \"https://i.example\"",
	"signature.key":      "oci = \"ghcr.io/example/p:1\"\n[plugin.signature]\nkey = \"cosign.pub\"",
	"ui.tools":           "[plugin.ui]\ntools = { t = \"page.html\" }", "ui.csp_connect": "[plugin.ui]\ncsp_connect = [\"https://a.example\"]",
	"ui.csp_resources": "[plugin.ui]\ncsp_resources = [\"https://a.example\"]", "ui.csp_frames": "[plugin.ui]\ncsp_frames = [\"https://a.example\"]",
	"ui.csp_base_uri": "[plugin.ui]\ncsp_base_uri = [\"https://a.example\"]",

	// [auth]
	"auth.resource": ``, "auth.issuers": ``, "auth.scopes": "[auth.scopes]\nread = [\"*\"]", "auth.jwks_url": `jwks_url = "https://i.example/jwks"`,
	"auth.introspection_url": "introspection_url = \"https://i.example/in\"\nclient_id_env = \"A\"\nclient_secret_env = \"B\"",
	"auth.client_id_env":     "introspection_url = \"https://i.example/in\"\nclient_id_env = \"A\"\nclient_secret_env = \"B\"",
	"auth.client_secret_env": "introspection_url = \"https://i.example/in\"\nclient_id_env = \"A\"\nclient_secret_env = \"B\"",
}

// TestInventory keeps the promise that a key cannot name a path without
// the inventory knowing it: every key the parser accepts (the lists its
// unknown-key check uses) is given a sample value pointing into a fresh
// directory, and every string of the parsed Config that names a path
// there must sit in a field tagged owned (and be in Config.Inventory, the
// secret ones in Config.Hidden) or reach (a mount, checked against the
// inventory by guardMounts).
func TestInventory(t *testing.T) {
	base := t.TempDir()
	conf := filepath.Join(base, "conf")
	t.Setenv("XDG_CACHE_HOME", filepath.Join(base, "cache"))
	for name, data := range map[string]string{
		"conf/secrets.env":             "S=v\n",
		"conf/policy.yaml":             "permissions:\n  storage:\n    allow:\n      - uri: fs://" + filepath.Join(base, "pdata") + "\n        access: [read]\n",
		"conf/page.html":               "<html></html>",
		"conf/skills/one/SKILL.md":     "---\nname: one\ndescription: x\n---\n",
		"conf/src/main.go":             "package main\n",
		"conf/data/.keep":              "",
		"conf/bdir/.keep":              "",
		"conf/lib/.keep":               "",
		"conf/drop/.keep":              "",
		"pdata/.keep":                  "",
		"cache/mcphost/.keep":          "",
		"conf/skills/one/assets/x.txt": "x",
	} {
		p := filepath.Join(base, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	writeKey(t, filepath.Join(conf, "cosign.pub"), pub)

	var keys []string
	for _, l := range []struct {
		prefix string
		keys   []string
	}{
		{"server.", serverKeys}, {"plugin.", slices.Concat(pluginKeys, remoteSourceKeys, buildKeys)}, {"mount.", mountKeys},
		{"signature.", signatureKeys}, {"ui.", uiKeys}, {"auth.", authKeys},
	} {
		for _, k := range l.keys {
			keys = append(keys, l.prefix+k)
		}
	}
	for _, key := range keys {
		t.Run(key, func(t *testing.T) {
			sample, ok := keySamples[key]
			switch {
			case key == "signature.trusted_root":
				f, _ := reflect.TypeFor[Signature]().FieldByName("TrustedRoot")
				if f.Tag.Get("owned") == "" {
					t.Fatal("Signature.TrustedRoot holds a path and has no owned tag")
				}
				return
			case !ok:
				t.Fatalf("key %s has no sample in keySamples: give it one, so that this test sees where its value lands", key)
			}
			body := "[[plugin]]\nname = \"p\"\n"
			switch table, _, _ := strings.Cut(key, "."); {
			case table == "server":
				body = "[server]\n" + sample + "\n\n" + body + "path = \"p.wasm\"\n"
			case table == "auth":
				body += "path = \"p.wasm\"\n\n[auth]\nresource = \"https://mcp.example\"\nissuers = [\"https://i.example\"]\n" + sample + "\n"
			case strings.Contains(sample, "source =") || strings.Contains(sample, "url =") || strings.Contains(sample, "oci =") || strings.Contains(sample, "path ="):
				body += sample + "\n"
			default:
				before, table, _ := strings.Cut(sample, "[plugin.")
				if table != "" {
					table = "[plugin." + table
				}
				body += "path = \"p.wasm\"\n" + before + "\n" + table + "\n"
			}
			cfg, err := ParseConfig(filepath.Join(conf, "plugins.toml"), []byte(body))
			if err != nil {
				t.Fatalf("ParseConfig of\n%s\n: %v", body, err)
			}
			inv := map[string]bool{}
			for _, o := range cfg.Inventory() {
				inv[o.Path] = true
			}
			hidden := cfg.Hidden()
			found := 0
			walkStrings(reflect.ValueOf(cfg).Elem(), "Config", "", func(field, tag, v string) {
				if !strings.Contains(v, base) {
					return
				}
				found++
				switch {
				case tag == "":
					t.Errorf("%s: path %q lands in %s, which has no owned or reach tag: tag it (guard.go), so that no mount reaches it", key, v, field)
				case strings.HasPrefix(tag, "reach"):
				case !inv[v] && !inv[globDir(v)]:
					t.Errorf("%s: %s = %q is tagged %s but not in Config.Inventory()", key, field, v, tag)
				case strings.HasPrefix(tag, "owned:decides") && !slices.Contains(hidden, v):
					t.Errorf("%s: %s = %q decides what plugins may do but is not in Config.Hidden()", key, field, v)
				}
			})
			if found == 0 {
				t.Logf("%s: names no path", key)
			}
		})
	}
}

// walkStrings calls fn for every string beneath v (fields, slices and
// maps, exported fields only), with the path of its field and the owned
// or reach tag of the nearest tagged field above it ("owned:KIND",
// "reach:KEY"; "" when none).
func walkStrings(v reflect.Value, field, tag string, fn func(field, tag, v string)) {
	switch v.Kind() {
	case reflect.String:
		fn(field, tag, v.String())
	case reflect.Pointer:
		if !v.IsNil() {
			walkStrings(v.Elem(), field, tag, fn)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walkStrings(v.Index(i), field+"[]", tag, fn)
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			walkStrings(it.Key(), field+"{key}", tag, fn)
			walkStrings(it.Value(), field+"{}", tag, fn)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			ftag := tag
			if o, ok := f.Tag.Lookup("owned"); ok {
				ftag = "owned:" + o
			} else if r, ok := f.Tag.Lookup("reach"); ok {
				ftag = "reach:" + r
			}
			walkStrings(v.Field(i), field+"."+f.Name, ftag, fn)
		}
	}
}

// TestReachTagged: every mount a configuration type holds is tagged reach
// (so that guardMounts checks it against the inventory), and every field
// tagged reach is a []limits.Mount (what guardMounts reads).
func TestReachTagged(t *testing.T) {
	mounts := reflect.TypeFor[[]limits.Mount]()
	seen := map[reflect.Type]bool{}
	var walk func(typ reflect.Type, where string)
	walk = func(typ reflect.Type, where string) {
		switch typ.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			walk(typ.Elem(), where)
			return
		case reflect.Struct:
		default:
			return
		}
		if seen[typ] || typ == reflect.TypeFor[limits.Mount]() {
			if typ == reflect.TypeFor[limits.Mount]() {
				t.Errorf("%s holds a limits.Mount outside a reach-tagged []limits.Mount", where)
			}
			return
		}
		seen[typ] = true
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() {
				continue
			}
			key, reach := f.Tag.Lookup("reach")
			switch {
			case reach && f.Type != mounts:
				t.Errorf("%s.%s is tagged reach:%q but is a %s; guardMounts reads []limits.Mount", where, f.Name, key, f.Type)
			case reach:
			case f.Type == mounts:
				t.Errorf("%s.%s is a []limits.Mount without a reach tag: guardMounts would not check it", where, f.Name)
			default:
				walk(f.Type, where+"."+f.Name)
			}
		}
	}
	walk(reflect.TypeFor[Config](), "Config")
}
