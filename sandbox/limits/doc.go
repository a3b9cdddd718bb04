// Package limits is the plain-data part of what a module may use: the
// defaults and bounds of sandbox.Limits, the [Mount] of an allowed path,
// the syntax of an allowed_hosts rule ([ParseHostRule]) and the name of
// the one runtime ([RuntimeNative]).
//
// It owns those values and the rule parser, so that package sandbox, which
// enforces them, and package plugins/config, which checks what a user
// wrote against them, share one definition without config linking wazero.
// Package sandbox re-exports them (sandbox.Mount, sandbox.CheckAllowedHost,
// sandbox.DefaultTimeout, …); embedders use those names.
//
// It ignores: enforcement (the egress dialer, the mounts' filesystems and
// the memory cap are package sandbox's), and what a file says (package
// plugins/config reads it). It imports no wazero; TestImportDirection holds
// it to that. It is not under sandbox/internal because plugins/config,
// outside sandbox/, imports it.
package limits
