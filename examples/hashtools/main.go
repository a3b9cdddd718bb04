package main

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
	"unicode/utf8"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
	_ "github.com/mcphost/mcphost/sdk-guest/stateless"
)

func main() {}

// pure marks tools whose result depends only on their arguments.
func pure(title string) *abi.ToolAnnotations {
	return &abi.ToolAnnotations{Title: title, ReadOnlyHint: new(true), DestructiveHint: new(false),
		IdempotentHint: new(true), OpenWorldHint: new(false)}
}

// HashIn is the input of the hash tools.
type HashIn struct {
	Text string `json:"text" jsonschema:"the text to hash (its UTF-8 bytes)"`
}

// HashOut is the structured output of the hash tools.
type HashOut struct {
	Algorithm string `json:"algorithm" jsonschema:"the hash algorithm"`
	Hex       string `json:"hex" jsonschema:"the digest in lower-case hexadecimal"`
}

// EncodeIn is the input of hex_encode.
type EncodeIn struct {
	Text string `json:"text" jsonschema:"the text to encode (its UTF-8 bytes)"`
}

// Base64EncodeIn is the input of base64_encode: a text and its alphabet.
type Base64EncodeIn struct {
	Text string `json:"text" jsonschema:"the text to encode (its UTF-8 bytes)"`
	URL  bool   `json:"url,omitempty" jsonschema:"use the URL-safe alphabet (RFC 4648 §5) without padding"`
}

// Base64DecodeIn is the input of base64_decode.
type Base64DecodeIn struct {
	Data string `json:"data" jsonschema:"base64 text, standard or URL-safe, padded or not"`
}

// HexDecodeIn is the input of hex_decode.
type HexDecodeIn struct {
	Hex string `json:"hex" jsonschema:"hexadecimal digits; spaces and an optional 0x prefix are ignored"`
}

// UUIDIn is the input of uuid.
type UUIDIn struct {
	Count int `json:"count,omitempty" jsonschema:"how many UUIDs to generate (1-100, default 1)"`
}

// CalcIn is the input of calc.
type CalcIn struct {
	Expression string `json:"expression" jsonschema:"an arithmetic expression, e.g. (1 + 2) * sqrt(16) ^ 2 % 7"`
}

// CalcOut is the structured output of calc.
type CalcOut struct {
	Expression string  `json:"expression" jsonschema:"the expression as given"`
	Value      float64 `json:"value" jsonschema:"its value"`
	Text       string  `json:"text" jsonschema:"the value formatted for reading"`
}

var hashes = []struct {
	name, title string
	new         func() hash.Hash
}{
	{"md5", "MD5", md5.New},
	{"sha1", "SHA-1", sha1.New},
	{"sha256", "SHA-256", sha256.New},
	{"sha512", "SHA-512", sha512.New},
}

func init() {
	for _, h := range hashes {
		guest.AddToolOut(guest.Tool{
			Name:        h.name,
			Title:       h.title,
			Description: fmt.Sprintf("Computes the %s digest of a text and returns it in hexadecimal.", h.title),
			Annotations: pure(h.title),
		}, func(_ *guest.Context, in HashIn) (HashOut, error) {
			d := h.new()
			d.Write([]byte(in.Text))
			return HashOut{Algorithm: h.name, Hex: hex.EncodeToString(d.Sum(nil))}, nil
		})
	}
	guest.AddTool(guest.Tool{Name: "base64_encode", Title: "Base64 encode", Annotations: pure("Base64 encode"),
		Description: "Encodes a text as base64 (standard alphabet with padding, or URL-safe without)."}, base64Encode)
	guest.AddTool(guest.Tool{Name: "base64_decode", Title: "Base64 decode", Annotations: pure("Base64 decode"),
		Description: "Decodes base64 (standard or URL-safe, padded or not) to text; binary data is shown as hex."}, base64Decode)
	guest.AddTool(guest.Tool{Name: "hex_encode", Title: "Hex encode", Annotations: pure("Hex encode"),
		Description: "Encodes a text as lower-case hexadecimal."}, hexEncode)
	guest.AddTool(guest.Tool{Name: "hex_decode", Title: "Hex decode", Annotations: pure("Hex decode"),
		Description: "Decodes hexadecimal to text; binary data is reported as such."}, hexDecode)
	guest.AddTool(guest.Tool{Name: "uuid", Title: "Random UUID",
		Description: "Generates random (version 4) UUIDs.",
		Annotations: &abi.ToolAnnotations{Title: "Random UUID", ReadOnlyHint: new(true), DestructiveHint: new(false),
			IdempotentHint: new(false), OpenWorldHint: new(false)}}, newUUIDs)
	guest.AddToolOut(guest.Tool{Name: "calc", Title: "Calculator", Annotations: pure("Calculator"),
		Description: "Evaluates an arithmetic expression: + - * / % ^ (power), parentheses, unary minus, " +
			"the constants pi and e, and the functions sqrt, abs, min, max, round, floor, ceil, ln, log10, sin, cos, tan."},
		calc)
}

func base64Encode(_ *guest.Context, in Base64EncodeIn) (*guest.Result, error) {
	enc := base64.StdEncoding
	if in.URL {
		enc = base64.RawURLEncoding
	}
	return guest.TextResult(enc.EncodeToString([]byte(in.Text))), nil
}

func base64Decode(_ *guest.Context, in Base64DecodeIn) (*guest.Result, error) {
	s := strings.Join(strings.Fields(in.Data), "")
	var (
		b   []byte
		err error
	)
	if strings.ContainsAny(s, "-_") {
		b, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	} else {
		b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
	}
	if err != nil {
		return nil, fmt.Errorf("not valid base64: %v", err)
	}
	return decoded(b), nil
}

func hexEncode(_ *guest.Context, in EncodeIn) (*guest.Result, error) {
	return guest.TextResult(hex.EncodeToString([]byte(in.Text))), nil
}

func hexDecode(_ *guest.Context, in HexDecodeIn) (*guest.Result, error) {
	s := strings.Join(strings.Fields(in.Hex), "")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not valid hexadecimal: %v", err)
	}
	return decoded(b), nil
}

// decoded shows decoded bytes as text when they are UTF-8 text, and
// otherwise says they are binary (in hex, which survives any transport).
func decoded(b []byte) *guest.Result {
	if utf8.Valid(b) && !strings.ContainsRune(string(b), 0) {
		return guest.TextResult(string(b))
	}
	return guest.TextResult(fmt.Sprintf("binary data, %d bytes, hex: %s", len(b), hex.EncodeToString(b)))
}

func newUUIDs(_ *guest.Context, in UUIDIn) (*guest.Result, error) {
	n := in.Count
	if n == 0 {
		n = 1
	}
	if n < 1 || n > 100 {
		return nil, fmt.Errorf("count must be between 1 and 100, got %d", in.Count)
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = uuidV4()
	}
	return guest.TextResult(strings.Join(ids, "\n")), nil
}

// uuidV4 returns a random RFC 9562 version 4 UUID.
func uuidV4() string {
	var u [16]byte
	rand.Read(u[:])         // never fails (crypto/rand panics rather than return an error)
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // variant 10
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func calc(_ *guest.Context, in CalcIn) (CalcOut, error) {
	v, err := Eval(in.Expression)
	if err != nil {
		return CalcOut{}, fmt.Errorf("calc: %w", err)
	}
	return CalcOut{Expression: in.Expression, Value: v, Text: formatNumber(v)}, nil
}
