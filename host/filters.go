package host

// logHidden logs, for a call of an unknown tool name, the filter that hid
// it (read_only, include_tools, exclude_tools), if one did: the client
// only hears "unknown tool", the operator learns why.
func (sc scope) logHidden(s *session, name string) {
	if sc.g == nil {
		return
	}
	p, h := sc.g.Hidden(name)
	if sc.p != nil {
		p, h = sc.p, sc.p.HiddenTool(name, true)
	}
	if h != nil && sc.owns(p) {
		s.log.Info("tool call refused: a filter hides the tool", "tool", name, "plugin", p.Name, "filter", h.Filter)
	}
}
