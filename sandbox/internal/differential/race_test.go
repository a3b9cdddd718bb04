//go:build race

package differential

// raceEnabled says the race detector is on; it makes compiling a Go guest
// take about 30 s, so the test that compiles every example is skipped.
const raceEnabled = true
