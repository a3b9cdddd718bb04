package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

var samples = []string{
	``, ` `, `{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e+3`, `-`, `01`, `1.`, `1e`, `.5`,
	`"a"`, `"\u00e9\ud83d\ude00\n\t\"\\\/"`, `"\ud800"`, `"\ud800\u0041"`, `"\x"`, `"\u12"`, "\"a\x01\"", "\"\xff\xfe\"",
	`{"a":1,"b":[1,2,{"c":null}],"d":"` + strings.Repeat("xyz", 100) + `"}`,
	`{"a":1,}`, `[1,]`, `{"a"}`, `{"a":}`, `{1:2}`, `[1 2]`, ` {"a" : [ 1 , 2 ] } `, `{"a":1}x`, `{"a":1} {}`,
	`{"a":1,"a":2}`, `{"\u0061":1}`, `"` + strings.Repeat(`0123456789abcdef`, 9) + `"`,
	`"` + strings.Repeat("é", 40) + "\xc3" + `"`,
}

func TestValidMatchesEncodingJSON(t *testing.T) {
	for _, s := range samples {
		if got, want := Valid([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("Valid(%q) = %v; want %v", s, got, want)
		}
	}
}

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for _, s := range samples {
		checkDecode(t, []byte(s))
	}
}

func checkDecode(t *testing.T, s []byte) {
	t.Helper()
	got, err := Decode(s)
	d := json.NewDecoder(bytes.NewReader(s))
	d.UseNumber()
	var want any
	werr := d.Decode(&want)
	if werr == nil {
		if _, e := d.Token(); !errors.Is(e, io.EOF) {
			werr = ErrSyntax
		}
	}
	if (err == nil) != (werr == nil) {
		t.Fatalf("Decode(%q): err %v; encoding/json err %v", s, err, werr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Errorf("Decode(%q) = %#v; want %#v", s, got, want)
	}
}

func TestMembers(t *testing.T) {
	doc := []byte(` {"content":[1, 2] ,"x" : {"y":"}"}} `)
	var got []string
	ok := Members(doc, func(k String, v []byte) {
		got = append(got, string(doc[k.Start:k.End])+"="+string(v))
	})
	if want := []string{`"content"=[1, 2]`, `"x"={"y":"}"}`}; !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("Members = %v %q; want true %q", ok, got, want)
	}
	for _, bad := range []string{`[]`, `{"a":1`, `{"a":1}}`, `null`} {
		if Members([]byte(bad), func(String, []byte) { t.Errorf("fn called for %q", bad) }) {
			t.Errorf("Members(%q) = true; want false", bad)
		}
	}
}

func FuzzValid(f *testing.F) {
	for _, s := range samples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		if got, want := Valid(s), json.Valid(s); got != want {
			t.Errorf("Valid(%q) = %v; want %v", s, got, want)
		}
	})
}

func FuzzDecode(f *testing.F) {
	for _, s := range samples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) { checkDecode(t, s) })
}

func BenchmarkValid3MB(b *testing.B) {
	doc := []byte(`{"text":"` + strings.Repeat("x", 3<<20) + `"}`)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if !Valid(doc) {
			b.Fatal("invalid")
		}
	}
}
