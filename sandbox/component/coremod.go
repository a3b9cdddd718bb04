package component

import (
	"errors"
	"fmt"
)

// coreImport is one import of a core module.
type coreImport struct {
	module, name string
	kind         byte // 0 func, 1 table, 2 memory, 3 global (core sorts)
	desc         []byte
}

// moduleImports reads a core module's import section.
func moduleImports(wasm []byte) ([]coreImport, error) {
	var out []coreImport
	err := walkModule(wasm, func(id byte, body []byte) error {
		if id != 2 {
			return nil
		}
		r := &reader{b: body}
		n, err := r.count()
		if err != nil {
			return err
		}
		for range n {
			mod, err := r.name()
			if err != nil {
				return err
			}
			name, err := r.name()
			if err != nil {
				return err
			}
			start := r.pos
			kind, err := r.byte()
			if err != nil {
				return err
			}
			switch kind {
			case 0x00:
				_, err = r.u32()
			case 0x01:
				var rt byte
				if rt, err = r.byte(); err == nil {
					if rt != 0x70 && rt != 0x6f {
						return unsupported("table imports of reference type 0x%02x", rt)
					}
					err = limits(r)
				}
			case 0x02:
				err = limits(r)
			case 0x03:
				if _, err = r.byte(); err == nil {
					_, err = r.byte()
				}
			default:
				return unsupported("core imports of kind 0x%02x", kind)
			}
			if err != nil {
				return err
			}
			out = append(out, coreImport{module: mod, name: name, kind: kind, desc: r.b[start:r.pos]})
		}
		return nil
	})
	return out, err
}

func limits(r *reader) error {
	flag, err := r.byte()
	if err != nil {
		return err
	}
	if flag > 0x03 {
		return unsupported("64-bit memories and tables")
	}
	if _, err := r.u32(); err != nil {
		return err
	}
	if flag&1 != 0 {
		_, err = r.u32()
	}
	return err
}

// walkModule calls f with each section of a core module.
func walkModule(wasm []byte, f func(id byte, body []byte) error) error {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" || wasm[4] != 1 || wasm[5] != 0 || wasm[6] != 0 || wasm[7] != 0 {
		return errors.New("not a core module")
	}
	r := &reader{b: wasm[8:], off: 8}
	for !r.done() {
		id, err := r.byte()
		if err != nil {
			return err
		}
		size, err := r.u32()
		if err != nil {
			return err
		}
		body, err := r.bytes(size)
		if err != nil {
			return err
		}
		if err := f(id, body); err != nil {
			return fmt.Errorf("section %d: %w", id, err)
		}
	}
	return nil
}

// rewriteImports returns wasm with its import section's module and field
// names replaced by names (one pair per import, in order); everything
// else is kept byte for byte.
func rewriteImports(wasm []byte, imports []coreImport, names [][2]string) ([]byte, error) {
	out := append([]byte(nil), wasm[:8]...)
	err := walkModule(wasm, func(id byte, body []byte) error {
		if id == 2 {
			var sec []byte
			sec = appendU32(sec, uint32(len(imports)))
			for i, im := range imports {
				sec = appendName(sec, names[i][0])
				sec = appendName(sec, names[i][1])
				sec = append(sec, im.desc...)
			}
			body = sec
		}
		out = append(out, id)
		out = appendU32(out, uint32(len(body)))
		out = append(out, body...)
		return nil
	})
	return out, err
}

func appendU32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func appendName(b []byte, s string) []byte {
	return append(appendU32(b, uint32(len(s))), s...)
}
