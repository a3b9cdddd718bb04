package config

// The read_only key, in [server] and in a [[plugin]] table: keep only the
// tools whose annotations say readOnlyHint: true. It is a tool filter
// beside include_tools and exclude_tools (applied with them in the
// plugins package). Parsed here and hooked into [configParser.server] and
// [configParser.plugin] by one line each.

func init() {
	serverKeys = append(serverKeys, "read_only")
	pluginKeys = append(pluginKeys, "read_only")
}

func (p *configParser) serverReadOnly(s section, m map[string]any, sc *ServerConfig) {
	if v, ok := s.boolean(m, "read_only"); ok {
		sc.ReadOnly = v
	}
}

func (p *configParser) pluginReadOnly(s section, m map[string]any, spec *Spec) {
	if v, ok := s.boolean(m, "read_only"); ok {
		spec.ReadOnly = &v
	}
}

// ReadOnlyTools reports whether spec's plugin keeps only its read-only
// tools: its own read_only when set, the server's otherwise.
func (spec *Spec) ReadOnlyTools(server *ServerConfig) bool {
	if spec.ReadOnly != nil {
		return *spec.ReadOnly
	}
	return server != nil && server.ReadOnly
}
