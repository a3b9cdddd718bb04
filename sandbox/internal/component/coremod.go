package component

import (
	"errors"
	"fmt"

	"github.com/mcphost/mcphost/internal/wasmbin"
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
		r := &reader{B: body}
		n, err := r.Count()
		if err != nil {
			return err
		}
		for range n {
			mod, err := r.Name()
			if err != nil {
				return err
			}
			name, err := r.Name()
			if err != nil {
				return err
			}
			start := r.Pos
			kind, err := r.Byte()
			if err != nil {
				return err
			}
			switch kind {
			case 0x00:
				_, err = r.U32()
			case 0x01:
				var rt byte
				if rt, err = r.Byte(); err == nil {
					if rt != 0x70 && rt != 0x6f {
						return unsupported("table imports of reference type 0x%02x", rt)
					}
					err = limits(r)
				}
			case 0x02:
				err = limits(r)
			case 0x03:
				if _, err = r.Byte(); err == nil {
					_, err = r.Byte()
				}
			default:
				return unsupported("core imports of kind 0x%02x", kind)
			}
			if err != nil {
				return err
			}
			out = append(out, coreImport{module: mod, name: name, kind: kind, desc: r.B[start:r.Pos]})
		}
		return nil
	})
	return out, err
}

func limits(r *reader) error {
	flag, err := r.Byte()
	if err != nil {
		return err
	}
	if flag > 0x03 {
		return unsupported("64-bit memories and tables")
	}
	if _, err := r.U32(); err != nil {
		return err
	}
	if flag&1 != 0 {
		_, err = r.U32()
	}
	return err
}

// walkModule calls f with each section of a core module.
func walkModule(wasm []byte, f func(id byte, body []byte) error) error {
	if wasmbin.KindOf(wasm) != wasmbin.Module {
		return errors.New("not a core module")
	}
	return wasmbin.Sections(wasm, func(s wasmbin.Section) error {
		if err := f(s.ID, s.Body); err != nil {
			return fmt.Errorf("section %d: %w", s.ID, err)
		}
		return nil
	})
}

// rewriteImports returns wasm with its import section's module and field
// names replaced by names (one pair per import, in order); everything
// else is kept byte for byte.
func rewriteImports(wasm []byte, imports []coreImport, names [][2]string) ([]byte, error) {
	out := append([]byte(nil), wasm[:8]...)
	err := walkModule(wasm, func(id byte, body []byte) error {
		if id == 2 {
			var sec []byte
			sec = wasmbin.AppendU32(sec, uint32(len(imports)))
			for i, im := range imports {
				sec = wasmbin.AppendName(sec, names[i][0])
				sec = wasmbin.AppendName(sec, names[i][1])
				sec = append(sec, im.desc...)
			}
			body = sec
		}
		out = append(out, id)
		out = wasmbin.AppendU32(out, uint32(len(body)))
		out = append(out, body...)
		return nil
	})
	return out, err
}
