package plugins

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/mcphost/mcphost/abi/jsonscan"
)

// A flatSchema is a tool schema (inputSchema or outputSchema) simple
// enough to check a document against in one pass over its bytes: an
// object whose properties are each of some primitive types, with required
// names and, optionally, no other properties. Most tools' schemas are of
// this shape (the Go SDK derives them from flat structs, the C kit's
// template writes one), and the general validator costs microseconds and
// dozens of allocations a call for them, building a tree of the document
// first; under load a C guest's output check took more CPU than the
// guest's own work.
//
// The check only ever proves a document valid. When it cannot (a wrong or
// unusual value, an escaped key, a number it does not classify), the
// general validator runs and has the last word, so its verdicts and
// messages are unchanged; FuzzFlatSchema checks that every "valid" here
// is valid there.
type flatSchema struct {
	props    map[string]flatProp
	required []string
	closed   bool // additionalProperties: false
}

// flatProp is what a property's value may be.
type flatProp struct {
	types          uint8 // a set of jsonTypes; 0 means any value
	minLen, maxLen int   // string length bounds in code points; maxLen < 0: none
}

const (
	tString uint8 = 1 << iota
	tNumber
	tInteger
	tBoolean
	tNull
	tObject
	tArray
)

var typeBits = map[string]uint8{
	"string": tString, "number": tNumber, "integer": tInteger, "boolean": tBoolean,
	"null": tNull, "object": tObject, "array": tArray,
}

// annotations are keywords that never change a verdict.
var annotations = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true,
	"$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true,
}

// compileFlat returns the flat form of the schema doc, or nil when it has
// any keyword beyond the few it understands.
func compileFlat(doc any) *flatSchema {
	obj, ok := doc.(map[string]any)
	if !ok || obj["type"] != "object" {
		return nil
	}
	fs := &flatSchema{props: map[string]flatProp{}}
	for k, v := range obj {
		switch {
		case k == "type" || annotations[k]:
		case k == "$schema":
			if v != "https://json-schema.org/draft/2020-12/schema" && v != "http://json-schema.org/draft-07/schema#" {
				return nil
			}
		case k == "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			for name, ps := range props {
				p, ok := compileFlatProp(ps)
				if !ok {
					return nil
				}
				fs.props[name] = p
			}
		case k == "required":
			names, ok := v.([]any)
			if !ok {
				return nil
			}
			for _, n := range names {
				s, ok := n.(string)
				if !ok {
					return nil
				}
				fs.required = append(fs.required, s)
			}
			if len(fs.required) > 64 { // valid keeps one bit per name
				return nil
			}
		case k == "additionalProperties":
			switch v {
			case false:
				fs.closed = true
			case true:
			default:
				return nil
			}
		default:
			return nil
		}
	}
	return fs
}

func compileFlatProp(ps any) (flatProp, bool) {
	p := flatProp{maxLen: -1}
	switch ps := ps.(type) {
	case bool:
		return p, ps // true: any value; false: none (left to the validator)
	case map[string]any:
		for k, v := range ps {
			switch {
			case annotations[k]:
			case k == "type":
				switch t := v.(type) {
				case string:
					if p.types = typeBits[t]; p.types == 0 {
						return p, false
					}
				case []any:
					for _, e := range t {
						s, _ := e.(string)
						b := typeBits[s]
						if b == 0 {
							return p, false
						}
						p.types |= b
					}
					if p.types == 0 {
						return p, false
					}
				default:
					return p, false
				}
			case k == "minLength" || k == "maxLength":
				n, ok := v.(json.Number)
				if !ok {
					return p, false
				}
				i, err := n.Int64()
				if err != nil || i < 0 || i > 1<<30 {
					return p, false
				}
				if k == "minLength" {
					p.minLen = int(i)
				} else {
					p.maxLen = int(i)
				}
			default:
				return p, false
			}
		}
		return p, true
	}
	return p, false
}

// valid reports whether args, a document (trimmed, not null), is
// certainly valid.
func (fs *flatSchema) valid(args []byte) bool {
	ok := true
	var found uint64 // required names seen, by index
	wellFormed := jsonscan.Members(args, func(key jsonscan.String, raw []byte) {
		if !ok {
			return
		}
		if key.Escaped {
			ok = false
			return
		}
		name := args[key.Start+1 : key.End-1]
		p, declared := fs.props[string(name)]
		if !declared {
			ok = !fs.closed
			return
		}
		for i, r := range fs.required {
			if r == string(name) {
				found |= 1 << i
			}
		}
		ok = p.admits(raw)
	})
	return wellFormed && ok && found == 1<<len(fs.required)-1
}

// admits reports whether raw, a valid JSON value, certainly has one of
// the property's types and its string length bounds.
func (p flatProp) admits(raw []byte) bool {
	if p.types == 0 {
		return p.minLen == 0 && p.maxLen < 0
	}
	var t uint8
	switch raw[0] {
	case '"':
		t = tString
	case '{':
		t = tObject
	case '[':
		t = tArray
	case 't', 'f':
		t = tBoolean
	case 'n':
		t = tNull
	default:
		// An integer is a number without fraction or exponent; 1.0 and
		// 1e2 are integers too, which the validator decides.
		if bytes.ContainsAny(raw, ".eE") {
			t = tNumber
		} else {
			t = tNumber | tInteger
		}
	}
	if p.types&t == 0 {
		return false
	}
	if t != tString || p.minLen == 0 && p.maxLen < 0 {
		return true
	}
	s := raw[1 : len(raw)-1]
	if bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s) {
		return false
	}
	n := utf8.RuneCount(s)
	return n >= p.minLen && (p.maxLen < 0 || n <= p.maxLen)
}
