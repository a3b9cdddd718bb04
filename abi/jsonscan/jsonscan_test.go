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
	``, ` `, `{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1.5e+3`, `-`, `01`, `1.`, `1e`, `.5`, `tru`, `nul`,
	`"a"`, `"\u00e9\ud83d\ude00\n\t\"\\\/\b\f"`, `"\ud800"`, `"\ud800\u0041"`, `"\udc00\ud800"`, `"\x"`, `"\u12"`,
	"\"a\x01\"", "\"\xff\xfe\"", "\"\u2028\u2029\"", `"unterminated`, `"\`,
	`{"a":1,"b":[1,2,{"c":null}],"d":"` + strings.Repeat("xyz", 100) + `"}`,
	`{"a":1,}`, `[1,]`, `{"a"}`, `{"a":}`, `{1:2}`, `[1 2]`, ` {"a" : [ 1 , 2 ] } `, `{"a":1}x`, `{"a":1} {}`,
	`{"a":1,"a":2}`, `{"\u0061":1}`, `"` + strings.Repeat(`0123456789abcdef`, 9) + `"`,
	`"` + strings.Repeat("é", 40) + "\xc3" + `"`, `"` + strings.Repeat("x", 70) + `\n` + strings.Repeat("é", 40) + `"`,
	strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth),
	strings.Repeat("[", MaxDepth+1) + strings.Repeat("]", MaxDepth+1),
}

func TestValidMatchesEncodingJSON(t *testing.T) {
	for _, s := range samples {
		checkValid(t, []byte(s))
	}
}

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for _, s := range samples {
		checkDecode(t, []byte(s))
	}
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "q\"b\\s/<>&", "\n\r\t\b\f\x00\x1f\x7f", "é😀", "\u2028\u2029", "bad\xff\xfeutf8\xc3",
		strings.Repeat("abcdefgh", 20) + "\"" + strings.Repeat("é", 50) + "\n" + strings.Repeat("z", 100)} {
		checkAppendString(t, s)
	}
}

// checkValid compares Valid with json.Valid, and the strings OnString
// reports with what encoding/json decodes from them.
func checkValid(t *testing.T, s []byte) {
	t.Helper()
	var strs []String
	got := Scanner{OnString: func(i String) { strs = append(strs, i) }}.Valid(s)
	if want := json.Valid(s); got != want || Valid(s) != want {
		t.Fatalf("Valid(%.80q) = %v; json.Valid says %v", s, got, want)
	}
	if !got {
		return
	}
	for _, i := range strs {
		lit := s[i.Start:i.End]
		var want string
		if err := json.Unmarshal(lit, &want); err != nil {
			t.Fatalf("OnString gave %q, which encoding/json refuses: %v", lit, err)
		}
		if u := Unquote(lit, i); u != want {
			t.Errorf("Unquote(%q) = %q; want %q", lit, u, want)
		}
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
		t.Fatalf("Decode(%.80q): err %v; encoding/json err %v", s, err, werr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Errorf("Decode(%.80q) = %#v; want %#v", s, got, want)
	}
}

// checkAppendString checks that AppendString writes a literal that
// encoding/json reads back as the string json.Marshal's literal holds.
func checkAppendString(t *testing.T, s string) {
	t.Helper()
	lit := AppendString([]byte("x"), s)[1:]
	var back, want string
	if err := json.Unmarshal(lit, &back); err != nil {
		t.Fatalf("AppendString(%q) = %s: %v", s, lit, err)
	}
	m, _ := json.Marshal(s)
	_ = json.Unmarshal(m, &want)
	if back != want {
		t.Errorf("AppendString(%q) reads back as %q; encoding/json's literal as %q", s, back, want)
	}
	if info, err := ScanString(lit, 0); err != nil || info.End != len(lit) {
		t.Errorf("ScanString(AppendString(%q)) = %+v, %v; want the whole literal", s, info, err)
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
	for _, bad := range []string{`[]`, `{"a":1`, `{"a":1}}`, `null`, `{"a":1,"b":}`} {
		if Members([]byte(bad), func(String, []byte) { t.Errorf("fn called for %q", bad) }) {
			t.Errorf("Members(%q) = true; want false", bad)
		}
	}
	if !Members([]byte(` {} `), func(String, []byte) { t.Error("fn called for {}") }) {
		t.Error("Members({}) = false; want true")
	}
}

// TestArray: Array hands each element's start to elem and ends where the
// array does; what is not an array, or an array cut short, is an error.
func TestArray(t *testing.T) {
	for _, tt := range []struct {
		doc  string
		want []string
		ok   bool
	}{
		{`[1, "a,]" ,[2,[3]] , {"k":[]}]`, []string{`1`, `"a,]"`, `[2,[3]]`, `{"k":[]}`}, true},
		{`[ ]`, nil, true},
		{`[1,]`, []string{`1`}, false},
		{`[1 2]`, []string{`1`}, false},
		{`[1`, []string{`1`}, false},
		{`[`, nil, false},
		{`{}`, nil, false},
	} {
		s := []byte(tt.doc)
		var got []string
		end, err := Scanner{}.Array(s, 0, func(v0 int) (int, error) {
			e, err := ScanValue(s, v0, 1)
			if err == nil {
				got = append(got, string(s[v0:e]))
			}
			return e, err
		})
		if (err == nil) != tt.ok || !reflect.DeepEqual(got, tt.want) || tt.ok && end != len(s) {
			t.Errorf("Array(%q) = %q, end %d, %v; want %q, ok %v", tt.doc, got, end, err, tt.want, tt.ok)
		}
	}
}

func TestOnStringSkipsKeys(t *testing.T) {
	doc := []byte(`{"k":"v","a":["x",{"k2":"y"}],"n":1}`)
	var got []string
	Scanner{OnString: func(i String) { got = append(got, string(doc[i.Start:i.End])) }}.Members(doc, func(String, []byte) {})
	if want := []string{`"v"`, `"x"`, `"y"`}; !reflect.DeepEqual(got, want) {
		t.Errorf("OnString saw %q; want %q", got, want)
	}
}

// FuzzValid: Valid is json.Valid, and the strings the scan reports
// unquote as encoding/json decodes them.
func FuzzValid(f *testing.F) {
	for _, s := range samples {
		f.Add([]byte(s))
	}
	f.Fuzz(checkValid)
}

// FuzzDecode: Decode builds json.Decoder's tree (UseNumber), and fails
// where it fails.
func FuzzDecode(f *testing.F) {
	for _, s := range samples {
		f.Add([]byte(s))
	}
	f.Fuzz(checkDecode)
}

// FuzzAppendString: what AppendString writes reads back, through
// encoding/json, as the string itself (invalid UTF-8 as U+FFFD).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\x00\u2028", "bad\xff", strings.Repeat("é", 30) + "\n"} {
		f.Add(s)
	}
	f.Fuzz(checkAppendString)
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

// BenchmarkValidSmall is a tools/call line, the codec's usual input.
func BenchmarkValidSmall(b *testing.B) {
	doc := []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo_echo","arguments":{"msg":"hello world","n":-1.5e3,"ok":true},"_meta":{"progressToken":3}}}`)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if !Valid(doc) {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkDecode(b *testing.B) {
	doc := []byte(`{"msg":"hello world","n":3,"tags":["a","b\n"],"o":{"x":null,"y":true}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendString3MB(b *testing.B) {
	s := strings.Repeat("x", 3<<20)
	buf := make([]byte, 0, len(s)+2)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendString(buf[:0], s)
	}
}

func BenchmarkMembers(b *testing.B) {
	doc := []byte(`{"content":[{"type":"text","text":"hello world"}],"structuredContent":{"n":1},"isError":false}`)
	b.ReportAllocs()
	for b.Loop() {
		if !Members(doc, func(String, []byte) {}) {
			b.Fatal("invalid")
		}
	}
}

// stringRunRef is StringRun byte by byte.
func stringRunRef(s []byte, i int) (int, bool) {
	high := false
	for ; i < len(s); i++ {
		c := s[i]
		if c == '"' || c == '\\' || c < ' ' {
			break
		}
		high = high || c >= 0x80
	}
	return i, high
}

// TestStringRun checks StringRun against a byte-by-byte scan with the
// stop (each kind, or none) and a high byte (or none) at every offset of
// runs long enough for every path: the first word, 64-byte rounds, 8-byte
// words and the tail.
func TestStringRun(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 63, 64, 65, 71, 72, 80, 130} {
		for stop := -1; stop < n; stop++ {
			for _, sc := range []byte{'"', '\\', 0x00, 0x1f} {
				for high := -1; high < n; high++ {
					s := bytes.Repeat([]byte{'a'}, n)
					if high >= 0 {
						s[high] = 0xc3
					}
					if stop >= 0 {
						s[stop] = sc
						if stop+1 < n {
							s[stop+1] = '#' // '"'^1: where the word tests can carry a false stop
						}
					}
					for _, i := range []int{0, 1, 3} {
						if i > n {
							continue
						}
						gotEnd, gotHigh := StringRun(s, i)
						wantEnd, wantHigh := stringRunRef(s, i)
						if gotEnd != wantEnd || gotHigh != wantHigh {
							t.Fatalf("StringRun(%q, %d) = %d, %v; want %d, %v", s, i, gotEnd, gotHigh, wantEnd, wantHigh)
						}
					}
				}
			}
		}
	}
}

// FuzzStringRun: StringRun is the byte-by-byte scan.
func FuzzStringRun(f *testing.F) {
	for _, s := range samples {
		f.Add([]byte(s), 0)
	}
	f.Fuzz(func(t *testing.T, s []byte, i int) {
		if i < 0 || i > len(s) {
			return
		}
		gotEnd, gotHigh := StringRun(s, i)
		if wantEnd, wantHigh := stringRunRef(s, i); gotEnd != wantEnd || gotHigh != wantHigh {
			t.Fatalf("StringRun(%q, %d) = %d, %v; want %d, %v", s, i, gotEnd, gotHigh, wantEnd, wantHigh)
		}
	})
}
