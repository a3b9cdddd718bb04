//go:build !unix

package opfile

const openFlags = 0
