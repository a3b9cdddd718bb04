package component

import (
	"github.com/mcphost/mcphost/internal/wasmbin"
)

// reader decodes the binary format's primitives from untrusted bytes:
// internal/wasmbin's, the one reader of Wasm binaries.
type reader = wasmbin.Reader

// errEOF is an item that runs past the end of its section.
var errEOF = wasmbin.ErrEOF

// externName reads an importname' or exportname' as wasmparser
// (crates/wasmparser/src/readers/component/imports.rs,
// ComponentExternName) does:
//   - 0x00, then the name: what toolchains write today;
//   - 0x01, then the name: the older form (wit-component before
//     September 2024, e.g. cargo-component 0.16), whose tag said "an
//     interface name" before that came from the name's own syntax;
//   - 0x02, then the name and a vector of options, each a tag and a
//     string: 0x00 implements, 0x01 a version suffix (appended to the
//     name), 0x02 an external id.
func externName(r *reader) (string, error) {
	tag, err := r.Byte()
	if err != nil {
		return "", err
	}
	if tag > 0x02 {
		return "", r.Errorf("unknown name form 0x%02x (0x00, 0x01 and 0x02 are known)", tag)
	}
	name, err := r.Name()
	if err != nil || tag != 0x02 {
		return name, err
	}
	n, err := r.Count()
	if err != nil {
		return "", err
	}
	var seen [3]bool
	suffix := ""
	for range n {
		opt, err := r.Byte()
		if err != nil {
			return "", err
		}
		if opt > 0x02 {
			return "", r.Errorf("name %q: unknown name option 0x%02x", name, opt)
		}
		if seen[opt] {
			return "", r.Errorf("name %q: option 0x%02x given twice", name, opt)
		}
		seen[opt] = true
		v, err := r.Name()
		if err != nil {
			return "", err
		}
		if opt == 0x01 {
			suffix = v
		}
	}
	return name + suffix, nil
}
