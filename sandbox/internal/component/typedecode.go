package component

import "fmt"

// featureComponentTypes is what a component type is refused as.
const featureComponentTypes = "component types (importing or exporting components)"

// defType reads a type definition in scope sc (the component's space or
// an instance type's local one). depth bounds nesting.
func (s *space) defType(r *reader, sc *space, depth int) (any, error) {
	if depth > maxDepth {
		return nil, unsupported("types nested more than %d deep", maxDepth)
	}
	op, err := r.Peek()
	if err != nil {
		return nil, err
	}
	switch op {
	case 0x40:
		r.Pos++
		return s.funcType(r, sc)
	case 0x41:
		return nil, &UnsupportedError{Feature: featureComponentTypes}
	case 0x42:
		r.Pos++
		return s.instanceType(r, sc, depth)
	case 0x3f:
		r.Pos++
		if b, err := r.Byte(); err != nil || b != 0x7f {
			return nil, r.Errorf("resource representation must be i32")
		}
		res := &Resource{local: true}
		has, err := r.Byte()
		if err != nil {
			return nil, err
		}
		if has == 0x01 {
			fi, err := r.U32()
			if err != nil {
				return nil, err
			}
			ref, err := s.coreIndex(coreSortFunc, fi)
			if err != nil {
				return nil, err
			}
			res.dtor = &ref
		}
		return res, nil
	case 0x3e:
		return nil, unsupported("async resource destructors")
	case 0x43:
		return nil, unsupported("async function types")
	}
	return valDefType(r, sc, depth)
}

// valDefType reads a defvaltype.
func valDefType(r *reader, sc *space, depth int) (*Type, error) {
	t, err := valDefType1(r, sc, depth)
	if err == nil && t.layout == nil {
		t.layout = computeLayout(t)
	}
	return t, err
}

func valDefType1(r *reader, sc *space, depth int) (*Type, error) {
	op, err := r.Byte()
	if err != nil {
		return nil, err
	}
	if t, ok := prims[op]; ok {
		return t, nil
	}
	switch op {
	case 0x72, 0x6f: // record, tuple
		n, err := r.Count()
		if err != nil {
			return nil, err
		}
		t := &Type{Kind: Record, Fields: make([]Field, n)}
		if op == 0x6f {
			t.Kind = Tuple
		}
		for i := range t.Fields {
			if op == 0x72 {
				if t.Fields[i].Name, err = r.Name(); err != nil {
					return nil, err
				}
			}
			if t.Fields[i].Type, err = valType(r, sc, depth); err != nil {
				return nil, err
			}
		}
		return t, nil
	case 0x71: // variant
		n, err := r.Count()
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, r.Errorf("variant without cases")
		}
		t := &Type{Kind: Variant, Fields: make([]Field, n)}
		for i := range t.Fields {
			if t.Fields[i].Name, err = r.Name(); err != nil {
				return nil, err
			}
			if t.Fields[i].Type, err = optValType(r, sc, depth); err != nil {
				return nil, err
			}
			if b, err := r.Byte(); err != nil {
				return nil, err
			} else if b != 0x00 {
				return nil, unsupported("variant cases that refine another")
			}
		}
		return t, nil
	case 0x70, 0x6b: // list, option
		e, err := valType(r, sc, depth)
		if err != nil {
			return nil, err
		}
		if op == 0x70 {
			return &Type{Kind: List, Elem: e}, nil
		}
		return &Type{Kind: Option, Elem: e}, nil
	case 0x6e, 0x6d: // flags, enum
		n, err := r.Count()
		if err != nil {
			return nil, err
		}
		t := &Type{Kind: Enum, Names: make([]string, n)}
		if op == 0x6e {
			t.Kind = Flags
			if n > 32 {
				return nil, unsupported("flags with more than 32 labels")
			}
		} else if n == 0 {
			return nil, r.Errorf("enum without cases")
		}
		for i := range t.Names {
			if t.Names[i], err = r.Name(); err != nil {
				return nil, err
			}
		}
		return t, nil
	case 0x6a: // result
		ok, err := optValType(r, sc, depth)
		if err != nil {
			return nil, err
		}
		e, err := optValType(r, sc, depth)
		if err != nil {
			return nil, err
		}
		return &Type{Kind: Result, Ok: ok, Err: e}, nil
	case 0x69, 0x68: // own, borrow
		i, err := r.U32()
		if err != nil {
			return nil, err
		}
		if int(i) >= len(sc.types) {
			return nil, r.Errorf("resource type %d out of range", i)
		}
		res, ok := sc.types[i].(*Resource)
		if !ok {
			return nil, r.Errorf("type %d is not a resource", i)
		}
		if op == 0x69 {
			return &Type{Kind: Own, Resource: res}, nil
		}
		return &Type{Kind: Borrow, Resource: res}, nil
	case 0x67:
		return nil, unsupported("fixed-size lists")
	case 0x66:
		return nil, unsupported("stream types")
	case 0x65:
		return nil, unsupported("future types")
	case 0x64:
		return nil, unsupported("error-context types")
	}
	return nil, r.Errorf("unknown type opcode 0x%02x", op)
}

// valType reads a valtype: a primitive or the index of a defined type.
func valType(r *reader, sc *space, depth int) (*Type, error) {
	if depth > maxDepth {
		return nil, unsupported("types nested more than %d deep", maxDepth)
	}
	v, err := r.S33()
	if err != nil {
		return nil, err
	}
	if v < 0 {
		if t, ok := prims[byte(v&0x7f)]; ok {
			return t, nil
		}
		if byte(v&0x7f) == 0x64 {
			return nil, unsupported("error-context types")
		}
		return nil, r.Errorf("unknown primitive type 0x%02x", byte(v&0x7f))
	}
	if v >= int64(len(sc.types)) {
		return nil, r.Errorf("type %d out of range", v)
	}
	t, ok := sc.types[v].(*Type)
	if !ok {
		return nil, r.Errorf("type %d is not a value type", v)
	}
	return t, nil
}

func optValType(r *reader, sc *space, depth int) (*Type, error) {
	b, err := r.Byte()
	if err != nil {
		return nil, err
	}
	switch b {
	case 0x00:
		return nil, nil
	case 0x01:
		return valType(r, sc, depth+1)
	}
	return nil, r.Errorf("bad optional type flag 0x%02x", b)
}

func (s *space) funcType(r *reader, sc *space) (*FuncType, error) {
	n, err := r.Count()
	if err != nil {
		return nil, err
	}
	ft := &FuncType{Params: make([]Field, n)}
	for i := range ft.Params {
		if ft.Params[i].Name, err = r.Name(); err != nil {
			return nil, err
		}
		if ft.Params[i].Type, err = valType(r, sc, 0); err != nil {
			return nil, err
		}
	}
	b, err := r.Byte()
	if err != nil {
		return nil, err
	}
	nodes := 0
	for _, p := range ft.Params {
		nodes += p.Type.layout.nodes
	}
	if nodes >= maxNodes {
		return nil, unsupported("function types whose parameters written out have more than %d nodes", maxNodes)
	}
	switch b {
	case 0x00:
		if ft.Result, err = valType(r, sc, 0); err == nil && ft.Result.layout.nodes >= maxNodes {
			return nil, unsupported("function types whose result written out has more than %d nodes", maxNodes)
		}
		return ft, err
	case 0x01:
		n, err := r.Count()
		if err != nil {
			return nil, err
		}
		if n != 0 {
			return nil, unsupported("functions with named results")
		}
		return ft, nil
	}
	return nil, r.Errorf("bad result list tag 0x%02x", b)
}

// instanceType reads an instance type's declarations in a local scope
// whose outer aliases reach sc.
func (s *space) instanceType(r *reader, sc *space, depth int) (*instanceType, error) {
	local := &space{parent: sc, c: s.c}
	it := &instanceType{exports: make(map[string]any)}
	n, err := r.Count()
	if err != nil {
		return nil, err
	}
	for range n {
		tag, err := r.Byte()
		if err != nil {
			return nil, err
		}
		switch tag {
		case 0x00:
			return nil, unsupported("core types in instance types")
		case 0x01:
			t, err := s.defType(r, local, depth+1)
			if err != nil {
				return nil, err
			}
			local.types = append(local.types, t)
		case 0x02:
			if err := local.alias(r); err != nil {
				return nil, err
			}
		case 0x04:
			name, err := externName(r)
			if err != nil {
				return nil, err
			}
			d, err := local.externDesc(r, name)
			if err != nil {
				return nil, fmt.Errorf("export %q: %w", name, err)
			}
			switch v := d.v.(type) {
			case *FuncType:
				it.exports[name] = v
			case *instanceType:
				return nil, unsupported("instances exported by instances")
			default:
				it.exports[name] = v
				local.types = append(local.types, v)
			}
		default:
			return nil, r.Errorf("unknown instance declaration 0x%02x", tag)
		}
	}
	return it, nil
}

// externDesc reads an externdesc in s; name names a fresh resource.
func (s *space) externDesc(r *reader, name string) (externItem, error) {
	kind, err := r.Byte()
	if err != nil {
		return externItem{}, err
	}
	switch kind {
	case 0x00:
		return externItem{}, unsupported("imports and exports of core modules")
	case 0x01, 0x05:
		i, err := r.U32()
		if err != nil {
			return externItem{}, err
		}
		if int(i) >= len(s.types) {
			return externItem{}, r.Errorf("type %d out of range", i)
		}
		if kind == 0x01 {
			ft, ok := s.types[i].(*FuncType)
			if !ok {
				return externItem{}, r.Errorf("type %d is not a function type", i)
			}
			return externItem{sort: sortFunc, v: ft}, nil
		}
		it, ok := s.types[i].(*instanceType)
		if !ok {
			return externItem{}, r.Errorf("type %d is not an instance type", i)
		}
		return externItem{sort: sortInstance, v: it}, nil
	case 0x02:
		return externItem{}, unsupported("value imports and exports")
	case 0x03:
		b, err := r.Byte()
		if err != nil {
			return externItem{}, err
		}
		switch b {
		case 0x00:
			i, err := r.U32()
			if err != nil {
				return externItem{}, err
			}
			if int(i) >= len(s.types) {
				return externItem{}, r.Errorf("type %d out of range", i)
			}
			return externItem{sort: sortType, v: s.types[i]}, nil
		case 0x01:
			return externItem{sort: sortType, v: &Resource{Name: name}}, nil
		}
		return externItem{}, r.Errorf("bad type bound 0x%02x", b)
	case 0x04:
		return externItem{}, unsupported("imports and exports of components")
	}
	return externItem{}, r.Errorf("unknown extern kind 0x%02x", kind)
}

// skipExternDesc reads past an externdesc whose meaning is not needed.
func skipExternDesc(r *reader) error {
	kind, err := r.Byte()
	if err != nil {
		return err
	}
	switch kind {
	case 0x00:
		if _, err := r.Byte(); err != nil {
			return err
		}
		_, err = r.U32()
	case 0x01, 0x04, 0x05:
		_, err = r.U32()
	case 0x02, 0x03:
		var b byte
		if b, err = r.Byte(); err != nil {
			return err
		}
		if kind == 0x03 && b == 0x01 {
			return nil
		}
		if kind == 0x02 && b == 0x01 {
			_, err = r.S33()
			return err
		}
		_, err = r.U32()
	default:
		return r.Errorf("unknown extern kind 0x%02x", kind)
	}
	return err
}
