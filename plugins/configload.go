package plugins

import (
	"cmp"
	"math"

	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/source"
	"github.com/mcphost/mcphost/plugins/store"
	"github.com/mcphost/mcphost/sandbox"
)

// configChecks are the checks package config asks of the packages that own
// a value's form (config.Checks): each is that package's own parser, so a
// value config accepts is one the fetch or the store accepts too.
var configChecks = config.Checks{
	URL: source.CheckURL,
	OCI: func(ref string, signed bool) error {
		if signed {
			_, err := source.ParseSignedOCIRef(ref)
			return err
		}
		_, err := source.ParseOCIRef(ref)
		return err
	},
	SignatureKey: func(file string) error { _, err := source.LoadPublicKey(file); return err },
	TrustedRoot:  func(file string) error { _, err := source.LoadTrustedRoot(file); return err },
	Store:        func(url string) error { _, err := store.ParseRedisURL(url); return err },
}

// LoadConfig is config.LoadConfig with every check: a url or oci reference,
// a signature's key and trusted_root files and the store URL are checked
// by the packages that use them, and a bad one is a *config.ConfigError
// naming its line and key.
func LoadConfig(file string) (*config.Config, error) { return configChecks.LoadConfig(file) }

// ParseConfig is config.ParseConfig with every check (see [LoadConfig]).
func ParseConfig(file string, data []byte) (*config.Config, error) {
	return configChecks.ParseConfig(file, data)
}

// effectiveLimits returns the sandbox limits of spec under server's
// defaults.
func effectiveLimits(spec *config.Spec, server *config.ServerConfig) sandbox.Limits {
	lim := sandbox.Limits{
		MemoryPages:  cmp.Or(spec.MemoryPages, server.MemoryPages),
		Timeout:      cmp.Or(spec.Timeout, server.Timeout),
		CancelGrace:  cmp.Or(spec.CancelGrace, server.CancelGrace),
		Instances:    cmp.Or(spec.MaxInstances, server.MaxInstances),
		AllowedHosts: spec.AllowedHosts,
		AllowedPaths: spec.AllowedPaths,

		MayRequestHosts: spec.MayRequestHosts,
		MayRequestPaths: spec.MayRequestPaths,
		Env:             spec.Env,
		Config:          spec.Config,

		AllowPrivateNetworks: spec.AllowPrivateNetworks,

		KVMaxKeys:  cmp.Or(spec.KVMaxKeys, config.DefaultKVMaxKeys),
		KVMaxBytes: cmp.Or(spec.KVMaxBytes, config.DefaultKVMaxBytes),
	}
	if len(lim.AllowedPaths)+len(lim.MayRequestPaths) > 0 {
		lim.Hidden = server.Hidden()
	}
	if server.MaxMessageBytes > 0 && server.MaxMessageBytes <= math.MaxInt32 {
		lim.MaxInputBytes = int(server.MaxMessageBytes)
	}
	return lim
}
