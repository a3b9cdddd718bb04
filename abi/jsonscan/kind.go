package jsonscan

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// Kind names the JSON type of v, a value of a tree jsonscan or
// encoding/json built ("null", "a boolean", "a number", "a string", "an
// array", "an object"), for messages such as "want an object, got an
// array". A value of any other Go type is named by its type's JSON kind
// (see KindOfType).
func Kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case json.Number:
		return "a number"
	}
	return KindOfType(reflect.TypeOf(v))
}

// KindOfType names the JSON type a value of Go type t encodes as and
// decodes from; a pointer is named by what it points to.
func KindOfType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Pointer:
		return KindOfType(t.Elem())
	}
	return fmt.Sprintf("a %s (no JSON type)", t)
}
