package plugins

import "strings"

// faultText turns the sandbox's detail of a failed call into what the
// plugin said, without the runtime's internals. The detail is the
// runtime's error ("wasm error: unreachable", "… (recovered by wazero)")
// and, after "; stderr: ", the last lines the guest wrote to stderr,
// joined with " | ". The guest's own words win: its panic or fatal error
// line. Without them the runtime's error is kept, minus its wrappers. The
// full detail still reaches the log (see Describe's callers).
func faultText(detail string) string {
	runtimeErr, stderr, _ := strings.Cut(detail, "; stderr: ")
	if msg := guestWords(stderr); msg != "" {
		return msg
	}
	s := strings.TrimSpace(runtimeErr)
	s = strings.TrimPrefix(s, "wasm error: ")
	s = strings.TrimSuffix(s, "(recovered by wazero)")
	return strings.TrimSpace(s)
}

// guestWords picks the lines of a guest's stderr summary that say what
// went wrong: Go's "panic: …" and "fatal error: …" lines, or else every
// line that is not the Go runtime's own diagnostics ("runtime: sp=…",
// "goroutine 1 [running]:").
func guestWords(summary string) string {
	if summary == "" {
		return ""
	}
	lines := strings.Split(summary, " | ")
	var said, other []string
	for _, l := range lines {
		l = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(l), "[recovered]"))
		switch {
		case l == "":
		case strings.HasPrefix(l, "panic: "):
			said = append(said, l)
		case strings.HasPrefix(l, "fatal error: "):
			said = append(said, strings.TrimPrefix(l, "fatal error: "))
		case strings.HasPrefix(l, "runtime: "), strings.HasPrefix(l, "goroutine "), strings.HasPrefix(l, "[signal "):
		default:
			other = append(other, l)
		}
	}
	if len(said) == 0 {
		said = other
	}
	return strings.Join(said, "; ")
}
