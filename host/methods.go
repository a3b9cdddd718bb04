package host

import "go.opentelemetry.io/otel/trace"

// methodTable returns the dispatch table of client→server requests, one
// per Server. With a tracer every handler runs inside its request's server
// span (trace.go).
func methodTable(tr trace.Tracer) map[string]*method {
	ms := []*method{
		{name: "initialize", fn: initialize, inline: true, beforeInit: true, era: eraLegacy},
		{name: "ping", fn: ping, inline: true, beforeInit: true, era: eraLegacy},
		{name: "logging/setLevel", fn: setLevel, inline: true, era: eraLegacy},
		{name: "server/discover", fn: discover, inline: true, era: eraStateless, cache: true},
		{name: "subscriptions/listen", fn: listen, era: eraStateless},
		{name: "tools/list", fn: listTools, cache: true},
		{name: "tools/call", fn: callTool, input: true},
		{name: "resources/list", fn: listResources, cache: true},
		{name: "resources/templates/list", fn: listTemplates, cache: true},
		{name: "resources/read", fn: readResource, cache: true, input: true},
		{name: "resources/subscribe", fn: subscribe, inline: true, era: eraLegacy},
		{name: "resources/unsubscribe", fn: unsubscribe, inline: true, era: eraLegacy},
		{name: "prompts/list", fn: listPrompts, cache: true},
		{name: "prompts/get", fn: getPrompt, input: true},
		{name: "completion/complete", fn: complete},
		{name: "tasks/get", fn: getTask, inline: true, era: eraStateless},
		{name: "tasks/update", fn: updateTask, inline: true, era: eraStateless},
		{name: "tasks/cancel", fn: cancelTask, inline: true, era: eraStateless},
		{name: "skills/list", fn: listSkills, cache: true}, // skills.go
		{name: "skills/get", fn: getSkill, cache: true},
		{name: "resources/directory/read", fn: readDirectory},
	}
	t := make(map[string]*method, len(ms))
	for _, m := range ms {
		if tr != nil {
			m.fn = traced(tr, m)
		}
		t[m.name] = m
	}
	return t
}
