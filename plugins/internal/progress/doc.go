// Package progress logs the long steps of loading a plugin (a Go build in
// plugins/source, a compile in plugins) as they run, so that a slow start
// names what it is waiting for.
//
// It owns the step's log lines and the goroutine that repeats them; it
// does not decide which steps are tracked or at what level they start.
package progress
