//go:build race

package sandbox

// raceEnabled says the race detector is on; it makes compiling a Go guest
// take about 30 s, so the test that does so is skipped.
const raceEnabled = true
