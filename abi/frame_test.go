package abi

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"testing"
	"unicode/utf8"
)

// TestCallFrame: a frame, in either layout, parses back into the fields
// it was built from, and every truncation of one is refused, never read
// past its end.
func TestCallFrame(t *testing.T) {
	tests := []struct {
		name string
		f    CallFrame
	}{
		{"full", CallFrame{Name: []byte("echo"), ID: []byte(`"req-1"`), Meta: []byte(`{"progressToken":5}`),
			ProtocolVersion: []byte("2025-11-25"), Plugin: []byte("p"), Members: AppendArgMembers(nil, []byte(`{"text":"hi"}`)),
			Arguments: []byte(`{"text":"hi"}`)}},
		{"no arguments", CallFrame{Name: []byte("echo"), ID: []byte(`3`), Meta: []byte(`{}`), Plugin: []byte("p")}},
		{"empty", CallFrame{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, layout := range []struct {
				name   string
				append func([]byte, *CallFrame) []byte
				parse  func([]byte, *CallFrame) bool
				fields [][]byte
				size   int
			}{
				{"call frame", AppendCallFrame, ParseCallFrame,
					[][]byte{tc.f.Name, tc.f.ID, tc.f.Meta, tc.f.ProtocolVersion, tc.f.Plugin, nil}, tc.f.Size() - 4 - len(tc.f.Members)},
				{"members frame", AppendMembersFrame, ParseMembersFrame,
					[][]byte{tc.f.Name, tc.f.ID, tc.f.Meta, tc.f.ProtocolVersion, tc.f.Plugin, tc.f.Members}, tc.f.Size()},
			} {
				b := layout.append(nil, &tc.f)
				if len(b) != layout.size {
					t.Errorf("%s: len = %d; want %d", layout.name, len(b), layout.size)
				}
				got := CallFrame{Members: []byte("stale")}
				if !layout.parse(b, &got) {
					t.Fatalf("%s: parse(%q) failed", layout.name, b)
				}
				for i, pair := range [][2][]byte{{got.Name, layout.fields[0]}, {got.ID, layout.fields[1]}, {got.Meta, layout.fields[2]},
					{got.ProtocolVersion, layout.fields[3]}, {got.Plugin, layout.fields[4]}, {got.Members, layout.fields[5]},
					{got.Arguments, tc.f.Arguments}} {
					if !bytes.Equal(pair[0], pair[1]) {
						t.Errorf("%s: field %d: got %q; want %q", layout.name, i, pair[0], pair[1])
					}
				}
				for n := range len(b) - len(tc.f.Arguments) {
					if layout.parse(b[:n], &got) {
						t.Errorf("%s: parse of %d of %d bytes succeeded; want refused", layout.name, n, len(b))
					}
				}
			}
		})
	}
}

// TestArgMembers: the index of an object's members gives each member's
// key and value spans and flags, in order, and ArgMembers accepts it for
// arguments that long; other arguments get no index.
func TestArgMembers(t *testing.T) {
	type member struct {
		key, value string
		flags      uint8
	}
	const plain = MemberKeyPlain
	tests := []struct {
		name, args string
		want       []member // nil: no index
	}{
		{"flat", `{"text":"hi","n":-1.5e3,"ok":true,"z":null}`, []member{
			{`"text"`, `"hi"`, plain | MemberString}, {`"n"`, `-1.5e3`, plain}, {`"ok"`, `true`, plain}, {`"z"`, `null`, plain}}},
		{"space", "{\n \"a\" :\t[1, {\"b\":2}] ,\"c\": {} }", []member{{`"a"`, `[1, {"b":2}]`, plain}, {`"c"`, `{}`, plain}}},
		{"escapes and high bytes", `{"t\u0065xt":"a\nb","ü":"é"}`, []member{
			{`"t\u0065xt"`, `"a\nb"`, MemberString | MemberEscaped}, {`"ü"`, `"é"`, MemberString | MemberHigh}}},
		{"repeated key", `{"a":1,"a":2}`, []member{{`"a"`, `1`, plain}, {`"a"`, `2`, plain}}},
		{"empty object", `{}`, []member{}},
		{"trailing space", "{\"a\":1} \n", []member{{`"a"`, `1`, plain}}},
		{"array", `[1,2]`, nil},
		{"string", `"x"`, nil},
		{"leading space", ` {"a":1}`, nil},
		{"none", ``, nil},
		{"invalid", `{"a":1,}`, nil},
		{"trailing garbage", `{"a":1} x`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := []byte(tc.args)
			index := AppendArgMembers([]byte("keep"), args)
			if string(index[:4]) != "keep" {
				t.Fatalf("dst's bytes changed: %q", index[:4])
			}
			index = index[4:]
			ms, ok := ArgMembers([]ArgMember{{}}, index, len(args))
			if tc.want == nil {
				if len(index) != 0 || ok {
					t.Fatalf("index %q (%+v, %v); want none", index, ms, ok)
				}
				return
			}
			if !ok || len(ms) != 1+len(tc.want) {
				t.Fatalf("ArgMembers = %+v, %v; want the one kept and %d, true", ms, ok, len(tc.want))
			}
			ms = ms[1:]
			for i, w := range tc.want {
				m := ms[i]
				if got := (member{string(args[m.K0:m.K1]), string(args[m.V0:m.V1]), m.Flags}); got != w {
					t.Errorf("member %d = %+v; want %+v", i, got, w)
				}
			}
			if len(ms) > 0 {
				if ms, ok := ArgMembers(nil, index, int(ms[len(ms)-1].V1)-1); ok || len(ms) != 0 {
					t.Errorf("ArgMembers accepted the index for arguments ending before its last value: %+v", ms)
				}
			}
			if _, ok := ArgMembers(nil, index[:len(index)-1], len(args)); ok {
				t.Error("ArgMembers accepted a truncated index")
			}
			if len(ms) > 0 {
				// A key that starts past the end wraps K0+2 around.
				bad := bytes.Clone(index)
				binary.LittleEndian.PutUint32(bad[4:], math.MaxUint32)
				if got, ok := ArgMembers(nil, bad, len(args)); ok {
					t.Errorf("ArgMembers accepted a key starting at %d: %+v", uint32(math.MaxUint32), got)
				}
			}
		})
	}
}

// FuzzArgMembers: for any bytes, the index describes exactly the members
// encoding/json finds, key by key, value by value; and ArgMembers never
// accepts an index whose spans leave the arguments or go backwards.
func FuzzArgMembers(f *testing.F) {
	f.Add([]byte(`{"a":"x","b":[1,2],"c":{"d":null}}`))
	f.Add([]byte(`{"\u0061":"\u00e9","a":1}`))
	f.Add([]byte(`[1]`))
	f.Fuzz(func(t *testing.T, args []byte) {
		index := AppendArgMembers(nil, args)
		ms, ok := ArgMembers(nil, index, len(args))
		var obj map[string]json.RawMessage
		isObject := len(args) > 0 && args[0] == '{' && json.Unmarshal(args, &obj) == nil
		if ok != isObject {
			t.Fatalf("%q: indexed %v; an object for encoding/json: %v", args, ok, isObject)
		}
		if len(ms) != len(obj) && !hasRepeats(args, ms) {
			t.Fatalf("%q: %d members indexed; encoding/json finds %d", args, len(ms), len(obj))
		}
		for i, m := range ms {
			var key string
			if err := json.Unmarshal(args[m.K0:m.K1], &key); err != nil {
				t.Fatalf("%q: member %d's key %q: %v", args, i, args[m.K0:m.K1], err)
			}
			if !json.Valid(args[m.V0:m.V1]) {
				t.Fatalf("%q: member %d's value %q is not JSON", args, i, args[m.V0:m.V1])
			}
			if isStr := args[m.V0] == '"'; isStr != (m.Flags&MemberString != 0) {
				t.Fatalf("%q: member %d: string flag %v for %q", args, i, !isStr, args[m.V0:m.V1])
			}
		}
		if ms, ok := ArgMembers(nil, args, len(args)); ok { // arbitrary bytes as an index
			last := uint32(0)
			for i, m := range ms {
				if m.K0 < last || m.K1 < m.K0+2 || m.V1 > uint32(len(args)) || m.V1 <= m.V0 || m.V0 <= m.K1 {
					t.Fatalf("accepted member %d: %+v", i, m)
				}
				last = m.V1
			}
		}
	})
}

// hasRepeats reports whether two of ms have keys that decode alike.
func hasRepeats(args []byte, ms []ArgMember) bool {
	seen := map[string]bool{}
	for _, m := range ms {
		var k string
		_ = json.Unmarshal(args[m.K0:m.K1], &k)
		if seen[k] {
			return true
		}
		seen[k] = true
	}
	return false
}

// FuzzCallFrame: any bytes either fail to parse or parse into fields
// that frame back into the same bytes.
func FuzzCallFrame(f *testing.F) {
	f.Add(AppendCallFrame(nil, &CallFrame{Name: []byte("echo"), ID: []byte("1"), Meta: []byte("{}"), Arguments: []byte(`{"a":1}`)}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		var fr CallFrame
		if !ParseCallFrame(b, &fr) {
			return
		}
		if again := AppendCallFrame(nil, &fr); !bytes.Equal(again, b) {
			t.Fatalf("reframed %q as %q", b, again)
		}
	})
}

// TestResultFrameMalformed: the host refuses, with ErrResultFrame, every
// result frame it cannot write exactly, and JSON longer than its bound.
func TestResultFrameMalformed(t *testing.T) {
	good, ok := AppendResultFrame(nil, &CallToolResult{Content: []Content{{Type: ContentText, Text: "hi"}}, StructuredContent: []byte(`{"a":1}`)})
	if !ok {
		t.Fatal("no frame for a text result")
	}
	js, _, _, err := AppendResultJSON(nil, good, 0)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		frame []byte
		max   int
	}{
		{"empty", nil, 0},
		{"JSON", []byte(`{"content":[]}`), 0},
		{"count past the end", append([]byte{0, 0}, 5, 0, 0, 0, 0, 0, 0, 0), 0},
		{"text past the end", []byte{0, 0, 1, 0, 0, 0, 9, 0, 0, 0, 'a'}, 0},
		{"no structured length", []byte{0, 0, 0, 0, 0, 0}, 0},
		{"trailing bytes", append(bytes.Clone(good), 'x'), 0},
		{"invalid structured", []byte{0, 0, 0, 0, 0, 0, 1, 0, 0, 0, '{'}, 0},
		{"over the bound", good, len(js) - 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, _, _, err := AppendResultJSON([]byte("keep"), tc.frame, tc.max)
			if !errors.Is(err, ErrResultFrame) || string(out) != "keep" {
				t.Errorf("got %q, %v; want ErrResultFrame and dst unchanged", out, err)
			}
		})
	}
	if out, _, _, err := AppendResultJSON(nil, good, len(js)); err != nil || !bytes.Equal(out, js) {
		t.Errorf("at its bound: %s, %v", out, err)
	}
}

// FuzzResultFrame: any bytes either are refused or written as valid JSON
// holding a content array; and a frame made of any texts is written as
// JSON that decodes back to those texts.
func FuzzResultFrame(f *testing.F) {
	f.Add([]byte{0, 1, 1, 0, 0, 0, 2, 0, 0, 0, 'h', 'i', 0, 0, 0, 0}, "a\"b", "\xff")
	f.Fuzz(func(t *testing.T, frame []byte, a, b string) {
		if out, _, _, err := AppendResultJSON(nil, frame, 1<<20); err == nil {
			var r struct {
				Content []struct{ Type, Text string } `json:"content"`
			}
			if err := json.Unmarshal(out, &r); err != nil || r.Content == nil {
				t.Fatalf("%q written as %s: %v", frame, out, err)
			}
		}
		res := &CallToolResult{Content: []Content{{Type: ContentText, Text: a}, {Type: ContentText, Text: b}}}
		fr, ok := AppendResultFrame(nil, res)
		if !ok {
			t.Fatal("no frame for text blocks")
		}
		out, _, _, err := AppendResultJSON(nil, fr, 0)
		var back struct {
			Content []struct{ Text string } `json:"content"`
		}
		if err != nil || json.Unmarshal(out, &back) != nil || len(back.Content) != 2 {
			t.Fatalf("%q: %s, %v", fr, out, err)
		}
		for i, want := range []string{a, b} {
			if utf8.ValidString(want) && back.Content[i].Text != want {
				t.Errorf("block %d: %q; want %q", i, back.Content[i].Text, want)
			}
		}
	})
}
