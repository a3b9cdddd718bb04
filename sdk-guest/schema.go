package guest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// SchemaFor derives a JSON Schema from the Go type T, the way [AddTool]
// derives input schemas. It is also handy for elicitation requests.
//
// The rules:
//   - the root is always "type":"object"; T must be a struct, a map with
//     string keys, or a pointer to one of them;
//   - a struct field's name is its json tag name (fields tagged "-" and
//     unexported fields are skipped; embedded structs without a json name
//     are flattened, as encoding/json does);
//   - a field is required unless its json tag says omitempty or omitzero;
//   - the jsonschema tag is the field's description, and an enum tag
//     ("a,b,c") lists the allowed values;
//   - string → string, bool → boolean, ints → integer (unsigned ones with
//     minimum 0), floats → number, slices and arrays → array ([]byte →
//     base64 string), maps → object with additionalProperties, structs →
//     object with additionalProperties:false, pointers → their element,
//     time.Time → date-time string, interfaces and json.RawMessage → any;
//   - a type that contains itself becomes a plain object where it recurs.
//
// Channels, functions and complex numbers are errors.
func SchemaFor[T any]() (json.RawMessage, error) {
	return schemaOf(reflect.TypeFor[T]())
}

func schemaOf(t reflect.Type) (json.RawMessage, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct && !(t.Kind() == reflect.Map && t.Key().Kind() == reflect.String) {
		return nil, fmt.Errorf("schema of %s: the root must be a struct or a map with string keys", t)
	}
	s, err := (&deriver{seen: map[reflect.Type]bool{}}).derive(t)
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", t, err)
	}
	return json.Marshal(s)
}

// schema is the subset of JSON Schema the SDK derives. Properties keep
// the order of the struct's fields.
type schema struct {
	Type                 string     `json:"type,omitempty"`
	Description          string     `json:"description,omitempty"`
	Format               string     `json:"format,omitempty"`
	ContentEncoding      string     `json:"contentEncoding,omitempty"`
	Enum                 []any      `json:"enum,omitempty"`
	Minimum              *float64   `json:"minimum,omitempty"`
	Items                *schema    `json:"items,omitempty"`
	Properties           *props     `json:"properties,omitempty"`
	Required             []string   `json:"required,omitempty"`
	AdditionalProperties additional `json:"additionalProperties,omitzero"`
}

// additional is additionalProperties: absent, false, or a schema.
type additional struct {
	set    bool
	schema *schema
}

func (a additional) IsZero() bool { return !a.set }

func (a additional) MarshalJSON() ([]byte, error) {
	if a.schema == nil {
		return []byte("false"), nil
	}
	return json.Marshal(a.schema)
}

type prop struct {
	name   string
	schema *schema
}

// props is an ordered "properties" object.
type props []prop

func (p *props) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range *p {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(e.name)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(e.schema)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

type deriver struct {
	seen map[reflect.Type]bool // types on the current path, to stop recursion
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
)

func (d *deriver) derive(t reflect.Type) (*schema, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case timeType:
		return &schema{Type: "string", Format: "date-time"}, nil
	case rawType:
		return &schema{}, nil
	}
	switch t.Kind() {
	case reflect.String:
		return &schema{Type: "string"}, nil
	case reflect.Bool:
		return &schema{Type: "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &schema{Type: "integer"}, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return &schema{Type: "integer", Minimum: new(0.0)}, nil
	case reflect.Float32, reflect.Float64:
		return &schema{Type: "number"}, nil
	case reflect.Interface:
		return &schema{}, nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return &schema{Type: "string", ContentEncoding: "base64"}, nil
		}
		items, err := d.derive(t.Elem())
		if err != nil {
			return nil, err
		}
		return &schema{Type: "array", Items: items}, nil
	case reflect.Map:
		if k := t.Key().Kind(); k != reflect.String && !(k >= reflect.Int && k <= reflect.Uint64) {
			return nil, fmt.Errorf("map key type %s is not supported", t.Key())
		}
		v, err := d.derive(t.Elem())
		if err != nil {
			return nil, err
		}
		return &schema{Type: "object", AdditionalProperties: additional{set: true, schema: v}}, nil
	case reflect.Struct:
		if d.seen[t] {
			return &schema{Type: "object"}, nil
		}
		d.seen[t] = true
		defer delete(d.seen, t)
		s := &schema{Type: "object", Properties: &props{}, AdditionalProperties: additional{set: true}}
		if err := d.fields(t, s, map[string]bool{}); err != nil {
			return nil, err
		}
		return s, nil
	default:
		return nil, fmt.Errorf("type %s (%s) cannot be described in JSON Schema", t, t.Kind())
	}
}

// fields adds t's fields to s, flattening embedded structs.
func (d *deriver) fields(t reflect.Type, s *schema, taken map[string]bool) error {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if err := d.fields(ft, s, taken); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if taken[name] {
			continue // the shallower field wins, as in encoding/json
		}
		taken[name] = true
		fs, err := d.derive(f.Type)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		if desc := f.Tag.Get("jsonschema"); desc != "" {
			c := *fs // copy: the description belongs to this field only
			c.Description = desc
			fs = &c
		}
		if enum := f.Tag.Get("enum"); enum != "" {
			vals, err := enumValues(fs.Type, enum)
			if err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
			c := *fs
			c.Enum = vals
			fs = &c
		}
		*s.Properties = append(*s.Properties, prop{name: name, schema: fs})
		if !hasOpt(opts, "omitempty") && !hasOpt(opts, "omitzero") {
			s.Required = append(s.Required, name)
		}
	}
	return nil
}

func hasOpt(opts, want string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

func enumValues(typ, list string) ([]any, error) {
	var vals []any
	for v := range strings.SplitSeq(list, ",") {
		v = strings.TrimSpace(v)
		switch typ {
		case "string":
			vals = append(vals, v)
		case "integer":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("enum value %q is not an integer", v)
			}
			vals = append(vals, n)
		case "number":
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, fmt.Errorf("enum value %q is not a number", v)
			}
			vals = append(vals, n)
		default:
			return nil, fmt.Errorf("enum tag on a %q field is not supported", typ)
		}
	}
	return vals, nil
}

// requiredOf returns the top-level "required" list of a schema, or nil.
func requiredOf(s json.RawMessage) []string {
	var v struct {
		Required []string `json:"required"`
	}
	if json.Unmarshal(s, &v) != nil {
		return nil
	}
	return v.Required
}
