// Package guestmem backs guests' linear memories with memory of their own,
// outside the Go heap, where the platform allows (64-bit Linux): each
// memory reserves its maximum as address space and commits pages as the
// guest grows into them.
//
// wazero's default keeps a linear memory in a Go slice and grows it with
// append: every memory.grow copies the memory into a larger slice and
// leaves the old one to the collector, and the memory counts toward the
// heap the collector paces itself on (GOGC), so a process whose guests
// hold 12 MiB of memory lets its heap run 12 MiB further before it
// collects. A reserved mapping grows in place and is not scanned; its
// pages go back to the system when its module closes, its address space
// when the instance that owns it is collected ([UnmapWith]).
//
// Elsewhere (and where the mapping fails) guests keep wazero's Go-heap
// memory; [Supported] says which one is in use.
package guestmem
