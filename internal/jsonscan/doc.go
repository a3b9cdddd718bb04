// Package jsonscan is the validating JSON scanner that host and plugins
// share on the tool-call hot path: it checks a document in one pass,
// stepping over string contents 8 bytes at a time, finds an object's
// members without building a tree, and builds the tree (the one
// encoding/json would, with json.Number numbers) in the same single pass
// when a schema needs one.
//
// Its notion of validity is json.Valid's and its trees are
// encoding/json's (FuzzValid and FuzzDecode check both). It owns no
// encoding: writers append their own JSON.
package jsonscan
