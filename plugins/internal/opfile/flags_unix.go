//go:build unix

package opfile

import "syscall"

// openFlags keeps an open from blocking on a FIFO put where a file was
// expected; the mode check refuses it next.
const openFlags = syscall.O_NONBLOCK
