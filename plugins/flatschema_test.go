package plugins

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi/jsonscan"
)

// flatCases are schemas of the flat shape: input schemas, and the output
// schema of the C kit's template.
var flatCases = []string{
	`{"type":"object","properties":{"text":{"type":"string","description":"d"}},"required":["text"],"additionalProperties":false}`,
	`{"type":"object","title":"t","properties":{"s":{"type":"string","minLength":2,"maxLength":4},"n":{"type":"integer"},"x":{"type":"number"},"b":{"type":"boolean"},"z":{"type":["string","null"]},"o":{"type":"object"},"a":{"type":"array"},"any":{},"t":true},"required":["s","n"]}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"n":{"type":"number"}},"additionalProperties":true}`,
	`{"type":"object"}`,
	`{"type":"object","properties":{"bytes":{"type":"integer"},"words":{"type":"integer"},"lines":{"type":"integer"}},"required":["bytes","words","lines"]}`,
}

func compileBoth(t testing.TB, raw string) (*flatSchema, func([]byte) error) {
	t.Helper()
	s, err := compileSchema("p", "t", "inputSchema", json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := decodeJSON([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return compileFlat(doc), func(args []byte) error {
		v, err := jsonscan.Decode(args)
		if err != nil {
			return err
		}
		return s.Validate(v)
	}
}

func TestFlatSchema(t *testing.T) {
	for _, tc := range []struct {
		schema int
		args   string
		fast   bool // the one pass proves them valid
	}{
		{0, `{"text":"hello"}`, true},
		{0, `{"text":"ünï \u00e9 escaped"}`, true},
		{0, `{}`, false},                    // missing: the validator says so
		{0, `{"text":1}`, false},            // wrong type
		{0, `{"text":"a","more":1}`, false}, // additionalProperties: false
		{0, `{"te\u0078t":"a"}`, false},     // escaped key: left to the validator (valid there)
		{0, `[1]`, false},                   // not an object
		{1, `{"s":"ab","n":3}`, true},
		{1, `{"s":"abcd","n":-0,"x":1.5e3,"b":false,"z":null,"o":{"k":[1]},"a":[],"any":"v","t":{},"extra":1}`, true},
		{1, `{"s":"a","n":3}`, false},     // too short
		{1, `{"s":"ééééé","n":3}`, false}, // too long in code points
		{1, `{"s":"éé","n":3}`, true},     // 4 bytes, 2 code points
		{1, `{"s":"a\"b","n":3}`, false},  // escaped: the validator counts
		{1, `{"s":"ab","n":1.0}`, false},  // integer 1.0: the validator decides
		{1, `{"s":"ab","n":"3"}`, false},
		{2, `{"n":1,"other":[true]}`, true},
		{3, `{"anything":[1,{"a":null}]}`, true},
		{4, `{"bytes":11,"words":2,"lines":1}`, true},
		{4, `{"bytes":11,"words":2}`, false},             // lines missing
		{4, `{"bytes":11,"words":2,"lines":1.5}`, false}, // not an integer
		{4, `{"bytes":11,"words":2,"lines":1e0}`, false}, // an integer the validator decides
		{4, `{"bytes":-0,"words":0,"lines":0,"more":"x"}`, true},
	} {
		fs, full := compileBoth(t, flatCases[tc.schema])
		if fs == nil {
			t.Fatalf("schema %d: not flat", tc.schema)
		}
		got := fs.valid([]byte(tc.args))
		if got != tc.fast {
			t.Errorf("schema %d, %s: one pass says %v; want %v", tc.schema, tc.args, got, tc.fast)
		}
		if got {
			if err := full([]byte(tc.args)); err != nil {
				t.Errorf("schema %d, %s: one pass says valid, the validator: %v", tc.schema, tc.args, err)
			}
		}
	}
	for _, raw := range []string{
		`{"type":"object","properties":{"e":{"enum":["a"]}}}`,
		`{"type":"object","properties":{"s":{"type":"string","format":"uri"}}}`,
		`{"type":"object","$defs":{},"properties":{}}`,
		`{"type":"object","properties":{"s":false}}`,
		`{"type":"object","additionalProperties":{"type":"string"}}`,
		`{"type":"object","$schema":"https://json-schema.org/draft/2019-09/schema"}`,
		`{"type":"object","required":[` + strings.Repeat(`"r",`, 64) + `"r"]}`, // 65 names: more than valid's bits
	} {
		doc, _ := decodeJSON([]byte(raw))
		if compileFlat(doc) != nil {
			t.Errorf("%s: compiled flat; want the general validator only", raw)
		}
	}
}

// Every document (arguments or structuredContent) the one pass calls
// valid is valid to the general validator, which decides every other.
func FuzzFlatSchema(f *testing.F) {
	for _, s := range []string{`{"text":"hello"}`, `{"s":"ab","n":3,"x":1,"b":true,"z":null,"o":{},"a":[]}`, `{"n":1e400}`,
		`{"bytes":11,"words":2,"lines":1}`, `{"bytes":1,"words":-2,"lines":1.0,"bytes":"x"}`,
		`{"s":"\u00e9\u00e9","n":-0}`, `{"s":"ab","n":3,"s":1}`, `{"text":"a","text":"b"}`, "{\"s\":\"\xff\xfe\",\"n\":1}"} {
		for i := range flatCases {
			f.Add(i, []byte(s))
		}
	}
	type compiled struct {
		fs   *flatSchema
		full func([]byte) error
	}
	var schemas []compiled
	for _, raw := range flatCases {
		fs, full := compileBoth(f, raw)
		schemas = append(schemas, compiled{fs, full})
	}
	f.Fuzz(func(t *testing.T, which int, args []byte) {
		c := schemas[uint(which)%uint(len(schemas))]
		if !jsonscan.Valid(args) {
			return // the codec refused it before any schema
		}
		if c.fs.valid(args) {
			if err := c.full(args); err != nil {
				t.Fatalf("one pass says %s valid; the validator: %v", args, err)
			}
		}
	})
}
