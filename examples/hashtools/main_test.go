package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/abi"
	"github.com/mcphost/mcphost/sdk-guest/guesttest"
)

func TestHashVectors(t *testing.T) {
	guesttest.Install(t, nil)
	tests := []struct{ tool, text, want string }{
		{"md5", "", "d41d8cd98f00b204e9800998ecf8427e"},
		{"md5", "abc", "900150983cd24fb0d6963f7d28e17f72"},
		{"sha1", "abc", "a9993e364706816aba3e25717850c26c9cd0d89d"},
		{"sha256", "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"sha256", "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"sha512", "abc", "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"},
	}
	for _, tt := range tests {
		res := guesttest.CallTool(t, tt.tool, map[string]string{"text": tt.text})
		var out HashOut
		if err := json.Unmarshal(res.StructuredContent, &out); err != nil {
			t.Fatalf("%s: structuredContent %s: %v", tt.tool, res.StructuredContent, err)
		}
		if out.Hex != tt.want || out.Algorithm != tt.tool || res.IsError {
			t.Errorf("%s(%q) = %+v (isError %v); want hex %s", tt.tool, tt.text, out, res.IsError, tt.want)
		}
		if len(res.Content) != 1 || res.Content[0].Text != string(res.StructuredContent) {
			t.Errorf("%s: text block %+v; want the structured JSON %s", tt.tool, res.Content, res.StructuredContent)
		}
	}
}

func TestToolsListed(t *testing.T) {
	tools := guesttest.ListTools(t)
	byName := map[string]abi.Tool{}
	for _, tl := range tools {
		byName[tl.Name] = tl
	}
	for _, name := range []string{"md5", "sha1", "sha256", "sha512", "base64_encode", "base64_decode", "hex_encode", "hex_decode", "uuid", "calc"} {
		tl, ok := byName[name]
		if !ok {
			t.Errorf("tool %s not listed", name)
			continue
		}
		if tl.Title == "" || tl.Description == "" || tl.Annotations == nil || tl.Annotations.ReadOnlyHint == nil || !*tl.Annotations.ReadOnlyHint {
			t.Errorf("tool %s: title %q, description %q, annotations %+v; want all set and read-only", name, tl.Title, tl.Description, tl.Annotations)
		}
		var s struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(tl.InputSchema, &s) != nil || s.Type != "object" {
			t.Errorf("tool %s: inputSchema %s; want type object", name, tl.InputSchema)
		}
	}
	// Each tool advertises only the options it reads: url is base64's.
	for name, want := range map[string]bool{"base64_encode": true, "hex_encode": false} {
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(byName[name].InputSchema, &s); err != nil {
			t.Fatal(err)
		}
		if _, got := s.Properties["url"]; got != want {
			t.Errorf("tool %s: inputSchema has url %v; want %v", name, got, want)
		}
	}
	if len(byName["sha256"].OutputSchema) == 0 || len(byName["calc"].OutputSchema) == 0 {
		t.Errorf("sha256 and calc must have an outputSchema")
	}
}

func TestCodecs(t *testing.T) {
	guesttest.Install(t, nil)
	tests := []struct {
		tool    string
		args    map[string]any
		want    string
		isError bool
	}{
		{"base64_encode", map[string]any{"text": "hello?>"}, "aGVsbG8/Pg==", false},
		{"base64_encode", map[string]any{"text": "hello?>", "url": true}, "aGVsbG8_Pg", false},
		{"base64_decode", map[string]any{"data": "aGVsbG8/Pg=="}, "hello?>", false},
		{"base64_decode", map[string]any{"data": "aGVsbG8_Pg"}, "hello?>", false},
		{"base64_decode", map[string]any{"data": "aGVs\nbG8="}, "hello", false},
		{"base64_decode", map[string]any{"data": "AAEC"}, "binary data, 3 bytes, hex: 000102", false},
		{"base64_decode", map[string]any{"data": "!!!"}, "not valid base64", true},
		{"hex_encode", map[string]any{"text": "hi"}, "6869", false},
		{"hex_decode", map[string]any{"hex": "0x68 69"}, "hi", false},
		{"hex_decode", map[string]any{"hex": "6"}, "not valid hexadecimal", true},
		{"hex_decode", map[string]any{"hex": "ff00"}, "binary data, 2 bytes, hex: ff00", false},
		{"calc", map[string]any{"expression": "1/0"}, "calc: at position 2: division by zero", true},
		{"calc", map[string]any{}, `missing required argument "expression"`, true},
	}
	for _, tt := range tests {
		res := guesttest.CallTool(t, tt.tool, tt.args)
		if len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, tt.want) || res.IsError != tt.isError {
			t.Errorf("%s(%v) = %+v; want text containing %q, isError %v", tt.tool, tt.args, res, tt.want, tt.isError)
		}
	}
}

func TestCalcStructured(t *testing.T) {
	guesttest.Install(t, nil)
	res := guesttest.CallTool(t, "calc", map[string]string{"expression": "(1 + 2) * sqrt(16)"})
	var out CalcOut
	if err := json.Unmarshal(res.StructuredContent, &out); err != nil || out.Value != 12 || out.Text != "12" {
		t.Errorf("calc structured = %s (%v); want value 12", res.StructuredContent, err)
	}
}

func TestUUID(t *testing.T) {
	guesttest.Install(t, nil)
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	res := guesttest.CallTool(t, "uuid", map[string]int{"count": 5})
	ids := strings.Split(res.Content[0].Text, "\n")
	seen := map[string]bool{}
	for _, id := range ids {
		if !re.MatchString(id) || seen[id] {
			t.Errorf("uuid %q: want a fresh RFC 9562 v4 UUID", id)
		}
		seen[id] = true
	}
	if len(ids) != 5 {
		t.Errorf("got %d UUIDs; want 5", len(ids))
	}
	if res := guesttest.CallTool(t, "uuid", map[string]int{"count": 101}); !res.IsError {
		t.Errorf("uuid count 101: isError false; want true")
	}
}
