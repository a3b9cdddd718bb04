// Package consent holds the system tests of consent: may_request_hosts and
// may_request_paths asked of the person behind the client, grants kept in
// plugins.grants.toml or the store.
package consent
