// Package jsonscan is the one validating JSON scanner of mcphost, shared
// by the host (the JSON-RPC codec, plugins' checks of guest output and
// schema validation) and the guest SDK (envelopes, big strings, output
// text). It checks a document in one pass, stepping over string contents
// 8 bytes at a time; finds an object's members without building a tree;
// builds the tree encoding/json would (json.Number numbers) in the same
// single pass when a schema needs one; decodes string literals; and
// appends strings quoted.
//
// Its notion of validity is json.Valid's, its trees and strings are
// encoding/json's, and AppendString writes what encoding/json reads back
// unchanged: the fuzzers check each against encoding/json.
//
// It owns no other encoding (writers append their own JSON) and no
// framing: lines and the JSON-RPC envelope belong to host/internal/jsonrpc. Like
// the rest of package abi it imports only the standard library and builds
// for GOOS=wasip1.
package jsonscan
