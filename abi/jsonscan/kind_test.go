package jsonscan

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestKind(t *testing.T) {
	tests := []struct {
		doc  string
		want string
	}{
		{`null`, "null"},
		{`true`, "a boolean"},
		{`1.5`, "a number"},
		{`"x"`, "a string"},
		{`[1]`, "an array"},
		{`{"a":1}`, "an object"},
	}
	for _, tt := range tests {
		v, err := Decode([]byte(tt.doc))
		if err != nil {
			t.Fatalf("Decode(%s): %v", tt.doc, err)
		}
		if got := Kind(v); got != tt.want {
			t.Errorf("Kind(%s) = %q; want %q", tt.doc, got, tt.want)
		}
		var std any
		if err := json.Unmarshal([]byte(tt.doc), &std); err != nil {
			t.Fatal(err)
		}
		if got := Kind(std); got != tt.want {
			t.Errorf("Kind of encoding/json's %s = %q; want %q", tt.doc, got, tt.want)
		}
	}
}

func TestKindOfType(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{"", "a string"},
		{uint8(0), "a number"},
		{struct{}{}, "an object"},
		{map[string]int{}, "an object"},
		{[2]int{}, "an array"},
		{(*bool)(nil), "a boolean"},
		{make(chan int), "a chan int (no JSON type)"},
	}
	for _, tt := range tests {
		if got := KindOfType(reflect.TypeOf(tt.v)); got != tt.want {
			t.Errorf("KindOfType(%T) = %q; want %q", tt.v, got, tt.want)
		}
	}
}
