package config

import (
	"fmt"
	"strconv"
	"strings"
)

// ConfigError is one problem in a configuration file. [ParseConfig] returns
// every problem it finds, joined with errors.Join; use errors.As to get at
// the first, or walk the joined error's Unwrap() []error for all of them.
type ConfigError struct {
	File string // as given to ParseConfig ("" when built in code)
	Line int    // 1-based; 0 when unknown
	// Table is "server", "plugin" or "" (the top level).
	Table string
	// Plugin is the plugin's name, when its table has a usable one.
	Plugin string
	// Index is the 1-based position of the [[plugin]] table (0 otherwise).
	Index int
	Key   string // dotted key relative to the table ("memory", "env.HOME")
	Msg   string
}

// Error formats the problem as
//
//	plugins.toml:12: plugin "hash": key "memroy": unknown key
func (e *ConfigError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	} else if e.Line > 0 {
		b.WriteString("line " + strconv.Itoa(e.Line) + ": ")
	}
	switch {
	case e.Table == "plugin" && e.Plugin != "":
		fmt.Fprintf(&b, "plugin %q: ", e.Plugin)
	case e.Table == "plugin" && e.Index > 0:
		fmt.Fprintf(&b, "plugin #%d: ", e.Index)
	case e.Table != "":
		b.WriteString(e.Table + ": ")
	}
	if e.Key != "" {
		fmt.Fprintf(&b, "key %q: ", e.Key)
	}
	b.WriteString(e.Msg)
	return b.String()
}
