package extism

import (
	"bytes"
	"errors"
	"unsafe"
)

// MaxVarBytes bounds one instance's vars, as go-sdk's default does.
const MaxVarBytes = 1 << 20

// Vars are one instance's Extism vars (var_get and var_set of
// extism:host/env): they live as long as the instance, across calls,
// bounded by MaxVarBytes with go-sdk's accounting.
type Vars struct {
	m     map[string][]byte
	bytes int
}

var errVarsFull = errors.New("variable store is full")

// Get returns a new block of k holding the var named by the block at
// key, or 0.
func (v *Vars) Get(k *Kernel, key uint64) uint64 {
	val, ok := v.m[string(k.Read(key))]
	if !ok {
		return 0
	}
	return k.Write(val)
}

// Set sets the var named by the block of k at key to the block at val;
// val 0 deletes it. Over MaxVarBytes it panics, which fails the call, as
// go-sdk does.
func (v *Vars) Set(k *Kernel, key, val uint64) {
	name := string(k.Read(key))
	if val == 0 {
		if old, ok := v.m[name]; ok {
			v.bytes -= varCost(name, old)
			delete(v.m, name)
		}
		return
	}
	b := bytes.Clone(k.Read(val))
	size := v.bytes + varCost(name, b)
	if old, ok := v.m[name]; ok {
		size -= varCost(name, old)
	}
	if size >= MaxVarBytes {
		panic(errVarsFull)
	}
	if v.m == nil {
		v.m = make(map[string][]byte)
	}
	v.m[name] = b
	v.bytes = size
}

func varCost(name string, v []byte) int {
	return int(unsafe.Sizeof([]byte{})+unsafe.Sizeof("")) + len(name) + len(v)
}
