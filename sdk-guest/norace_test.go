//go:build !race

package guest_test

const raceEnabled = false
