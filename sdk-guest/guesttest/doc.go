// Package guesttest runs a plugin's handlers natively in go test: a fake
// host that records every host-function call, and helpers that drive
// guest.Dispatch with properly built inputs.
//
//	func TestSHA256(t *testing.T) {
//		guesttest.Install(t, nil)
//		res := guesttest.CallTool(t, "sha256", map[string]any{"text": "abc"})
//		if got := res.Content[0].Text; got != want { … }
//	}
//
// It is test support: it imports testing and belongs in _test.go files.
package guesttest
