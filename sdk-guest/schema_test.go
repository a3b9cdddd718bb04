package guest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

type schemaInner struct {
	Street string `json:"street"`
	City   string `json:"city,omitempty"`
}

type schemaEmbedded struct {
	ID string `json:"id" jsonschema:"the id"`
}

type schemaAll struct {
	schemaEmbedded
	Text    string          `json:"text" jsonschema:"the text to hash"`
	Count   int             `json:"count,omitempty"`
	Size    uint32          `json:"size,omitzero"`
	Ratio   float64         `json:"ratio"`
	On      bool            `json:"on"`
	Tags    []string        `json:"tags,omitempty"`
	Grid    [2][]int        `json:"grid,omitempty"`
	Attrs   map[string]int  `json:"attrs,omitempty"`
	Addr    *schemaInner    `json:"addr,omitempty" jsonschema:"where"`
	Addrs   []schemaInner   `json:"addrs,omitempty"`
	When    time.Time       `json:"when,omitempty"`
	Blob    []byte          `json:"blob,omitempty"`
	Any     any             `json:"any,omitempty"`
	Raw     json.RawMessage `json:"raw,omitempty"`
	Mode    string          `json:"mode,omitempty" enum:"fast, slow"`
	Level   int             `json:"level,omitempty" enum:"1,2,3"`
	NoTag   string
	Skipped string `json:"-"`
	private string
	Nested  map[string]*inner `json:"nested,omitempty"`
}

type inner struct {
	X float32 `json:"x"`
}

type schemaRec struct {
	Name     string       `json:"name"`
	Children []*schemaRec `json:"children,omitempty"`
}

func TestSchemaFor(t *testing.T) {
	tests := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"empty struct", reflect.TypeFor[struct{}](), `{"type":"object","properties":{},"additionalProperties":false}`},
		{"pointer root", reflect.TypeFor[*schemaInner](),
			`{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}},"required":["street"],"additionalProperties":false}`},
		{"map root", reflect.TypeFor[map[string]string](), `{"type":"object","additionalProperties":{"type":"string"}}`},
		{"recursive", reflect.TypeFor[schemaRec](),
			`{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"type":"object"}}},"required":["name"],"additionalProperties":false}`},
		{"everything", reflect.TypeFor[schemaAll](), `{"type":"object","properties":{` +
			`"id":{"type":"string","description":"the id"},` +
			`"text":{"type":"string","description":"the text to hash"},` +
			`"count":{"type":"integer"},` +
			`"size":{"type":"integer","minimum":0},` +
			`"ratio":{"type":"number"},` +
			`"on":{"type":"boolean"},` +
			`"tags":{"type":"array","items":{"type":"string"}},` +
			`"grid":{"type":"array","items":{"type":"array","items":{"type":"integer"}}},` +
			`"attrs":{"type":"object","additionalProperties":{"type":"integer"}},` +
			`"addr":{"type":"object","description":"where","properties":{"street":{"type":"string"},"city":{"type":"string"}},"required":["street"],"additionalProperties":false},` +
			`"addrs":{"type":"array","items":{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}},"required":["street"],"additionalProperties":false}},` +
			`"when":{"type":"string","format":"date-time"},` +
			`"blob":{"type":"string","contentEncoding":"base64"},` +
			`"any":{},"raw":{},` +
			`"mode":{"type":"string","enum":["fast","slow"]},` +
			`"level":{"type":"integer","enum":[1,2,3]},` +
			`"NoTag":{"type":"string"},` +
			`"nested":{"type":"object","additionalProperties":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"],"additionalProperties":false}}},` +
			`"required":["id","text","ratio","on","NoTag"],"additionalProperties":false}`},
	}
	for _, tt := range tests {
		got, err := schemaOf(tt.typ)
		if err != nil {
			t.Errorf("%s: error %v", tt.name, err)
			continue
		}
		if string(got) != tt.want {
			t.Errorf("%s:\ngot  %s\nwant %s", tt.name, got, tt.want)
		}
	}
}

func TestSchemaForErrors(t *testing.T) {
	type badField struct {
		C chan int `json:"c"`
	}
	type badEnum struct {
		N int `json:"n" enum:"one"`
	}
	type badEnumType struct {
		B bool `json:"b" enum:"true"`
	}
	tests := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"string root", reflect.TypeFor[string](), "the root must be a struct"},
		{"int-keyed map root", reflect.TypeFor[map[int]string](), "the root must be a struct"},
		{"chan field", reflect.TypeFor[badField](), "field C: type chan int (chan) cannot be described"},
		{"func in map", reflect.TypeFor[map[string]func()](), "cannot be described"},
		{"bad enum", reflect.TypeFor[badEnum](), `enum value "one" is not an integer`},
		{"enum on bool", reflect.TypeFor[badEnumType](), "enum tag on a \"boolean\" field"},
	}
	for _, tt := range tests {
		_, err := schemaOf(tt.typ)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v; want it to contain %q", tt.name, err, tt.want)
		}
	}
}

func TestSchemaForGeneric(t *testing.T) {
	got, err := SchemaFor[schemaInner]()
	want := `{"type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}},"required":["street"],"additionalProperties":false}`
	if err != nil || string(got) != want {
		t.Errorf("SchemaFor = %s, %v; want %s", got, err, want)
	}
}
