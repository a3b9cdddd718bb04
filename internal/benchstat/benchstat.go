// Package benchstat holds the statistics that benchmarks comparing
// interleaved rounds report. It is a test helper (see internal/doc.go).
package benchstat

import (
	"math"
	"slices"
)

// Median returns the median of v, or NaN for an empty v. v is not changed.
func Median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
