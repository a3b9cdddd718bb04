package wasmbin

import (
	"errors"
	"fmt"
)

// SecCustom is the id of a custom section, in a core module or a
// component: a name, then bytes the runtime ignores.
const SecCustom = 0

// CustomSection returns the body of wasm's custom section called name,
// after its name, not copied; found is false when there is none. It fails
// when the binary's sections do not read (a cut file, a bad size), when
// a custom section's name does not read, or when two sections have the
// name (which of them a writer meant is unknowable).
func CustomSection(wasm []byte, name string) (body []byte, found bool, err error) {
	err = Sections(wasm, func(s Section) error {
		if s.ID != SecCustom {
			return nil
		}
		r := &Reader{B: s.Body, Off: s.Off}
		n, err := r.Name()
		if err != nil {
			return fmt.Errorf("custom section at byte %d: its name: %w", s.At, err)
		}
		if n != name {
			return nil
		}
		if found {
			return &Error{Offset: s.At, Msg: fmt.Sprintf("a second custom section named %q", name)}
		}
		body, found = s.Body[r.Pos:], true
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return body, found, nil
}

// SetCustomSection returns a copy of wasm without its custom sections
// called name and with one such section, holding body, at the end. wasm's
// sections, and its custom sections' names, must read; nothing else is
// checked or changed.
func SetCustomSection(wasm []byte, name string, body []byte) ([]byte, error) {
	if len(name) > 1<<20 || uint64(len(body)) > 1<<31 {
		return nil, errors.New("custom section too large")
	}
	out := make([]byte, 0, len(wasm)+len(name)+len(body)+16)
	out = append(out, wasm[:min(len(wasm), HeaderSize)]...)
	err := Sections(wasm, func(s Section) error {
		if s.ID == SecCustom {
			r := &Reader{B: s.Body, Off: s.Off}
			n, err := r.Name()
			if err != nil {
				return fmt.Errorf("custom section at byte %d: its name: %w", s.At, err)
			}
			if n == name {
				return nil // dropped
			}
		}
		out = append(out, wasm[s.At:s.Off+len(s.Body)]...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return AppendSection(out, SecCustom, append(AppendName(nil, name), body...)), nil
}
