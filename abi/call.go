package abi

// CallNamespace is mcphost's extension that lets a guest ask about the
// call it is serving. Like [IONamespace] it is an addition: Extism hosts
// lack it, and a guest built with sdk-guest that runs on one is given a
// stand-in that answers "not cancelled".
const CallNamespace = "mcphost:host/call"

// Functions of [CallNamespace].
const (
	// CallCancelled () -> i32 returns 1 once the client has cancelled the
	// call being served (notifications/cancelled, a closed connection, the
	// request's own deadline), else 0. A guest told so has the plugin's
	// cancel_grace to return: one that does keeps its instance, and with
	// it its state; one that does not is stopped and replaced. It is
	// cheap (no payload, no allocation), so a guest may ask it in a loop.
	CallCancelled = "cancelled"
)
