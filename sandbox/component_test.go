package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcphost/mcphost/abi"

	"github.com/mcphost/mcphost/internal/benchstat"
)

// componentWasm returns a component built by scripts/components.sh
// (MCPHOST_COMPONENTS), or skips; under CI=true its absence fails.
func componentWasm(t *testing.T, name string) []byte {
	t.Helper()
	dir := componentDir()
	why := "MCPHOST_COMPONENTS is not set"
	if dir != "" {
		b, err := os.ReadFile(filepath.Join(dir, name+".wasm"))
		if err == nil {
			return b
		}
		why = err.Error()
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true: scripts/components.sh should have built it)", why)
	}
	t.Skipf("skipping: %s; run scripts/components.sh (or eval \"$(scripts/components.sh --env)\")", why)
	return nil
}

// componentDir is where scripts/components.sh put the components.
func componentDir() string { return os.Getenv("MCPHOST_COMPONENTS") }

// componentCall calls the tool name of the component m through its
// Guest, the tool resolved by its place in the list as plugins does.
func componentCall(t *testing.T, m *Module, name string, args string) (abi.CallToolResult, error) {
	t.Helper()
	g, err := NewGuest(m, "test")
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.CallTool(context.Background(), toolRef(t, g, name), json.RawMessage(args), abi.Context{})
	var res abi.CallToolResult
	if err == nil {
		if jerr := json.Unmarshal(out.JSON, &res); jerr != nil {
			t.Fatalf("%s: output %s: %v", name, out.JSON, jerr)
		}
		if out.IsError != res.IsError {
			t.Fatalf("%s: ToolResult.IsError %v; the output says %v", name, out.IsError, res.IsError)
		}
	}
	return res, err
}

// guestLists returns m's Guest and its lists.
func guestLists(t testing.TB, m *Module) (Guest, *Lists) {
	t.Helper()
	g, err := NewGuest(m, m.Name())
	if err != nil {
		t.Fatal(err)
	}
	ls, err := g.Lists(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return g, ls
}

// toolRef resolves the tool name in g's list, as plugins does at load.
func toolRef(t testing.TB, g Guest, name string) ToolRef {
	t.Helper()
	ls, err := g.Lists(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i, raw := range ls.Tools {
		var def abi.Tool
		if json.Unmarshal(raw, &def) == nil && def.Name == name {
			return ToolRef{Name: name, Index: i}
		}
	}
	t.Fatalf("no tool %q in the list", name)
	return ToolRef{}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestComponentTypeKinds(t *testing.T) {
	wasm := componentWasm(t, "kinds")
	m, err := testEngine.Load(context.Background(), "kinds", wasm, Limits{Instances: 1, Env: map[string]string{"GREETING": "grüß dich"}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	tests := []struct {
		tool, args string
		text       string
		structured string
		isError    bool
	}{
		{"greet", `{"name":"wörld ✓"}`, "¡hola, wörld ✓!", `{"result":"¡hola, wörld ✓!"}`, false},
		{"add", `{"a":255,"b":-32768,"c":4294967295,"d":-9223372036854775807,"e":1}`, "-9223372032559841024", `{"result":-9223372032559841024}`, false},
		{"swap-floats", `{"a":1.5,"b":-2.25}`, "[-2.25,1.5]", `{"result":[-2.25,1.5]}`, false},
		{"next-char", `{"c":"ÿ","b":false}`, `["Ā",true]`, `{"result":["Ā",true]}`, false},
		{"reverse", `{"xs":["α","β","γδ"]}`, `["γδ","β","α"]`, `{"result":["γδ","β","α"]}`, false},
		{"reverse", `{"xs":[]}`, `[]`, `{"result":[]}`, false},
		{"double", `{"o":21}`, "42", `{"result":42}`, false},
		{"double", `{"o":null}`, "null", `{"result":null}`, false},
		{"divide", `{"a":7,"b":2}`, "3", `{"result":3}`, false},
		{"divide", `{"a":7,"b":0}`, "division by zero", "", true},
		{"sum17", `{"a1":1,"a2":2,"a3":3,"a4":4,"a5":5,"a6":6,"a7":7,"a8":8,"a9":9,"a10":10,"a11":11,"a12":12,"a13":13,"a14":14,"a15":15,"a16":16,"a17":17}`, "153", `{"result":153}`, false},
		{"getenv", `{"name":"GREETING"}`, "grüß dich", `{"result":"grüß dich"}`, false},
		{"getenv", `{"name":"HOME"}`, "null", `{"result":null}`, false},
		{"echo-point", `{"p":{"x":1,"y":-2,"label":"naïve"}}`, `{"label":"naïve","x":2,"y":-1}`, `{"label":"naïve","x":2,"y":-1}`, false},
		{"next-color", `{"c":"blue"}`, "red", `{"result":"red"}`, false},
		{"toggle-exec", `{"p":["read","exec"]}`, `["read"]`, `{"result":["read"]}`, false},
		{"scale", `{"s":{"circle":1.25}}`, `{"circle":2.5}`, `{"result":{"circle":2.5}}`, false},
		{"scale", `{"s":{"rect":{"x":3,"y":4,"label":"ü"}}}`, `{"rect":{"label":"ü","x":6,"y":8}}`, `{"result":{"rect":{"label":"ü","x":6,"y":8}}}`, false},
		{"scale", `{"s":{"empty":null}}`, `{"empty":null}`, `{"result":{"empty":null}}`, false},
		{"add", `{"a":256,"b":0,"c":0,"d":0,"e":0}`, "invalid arguments", "", true},
		{"greet", `{}`, `missing "name"`, "", true},
	}
	for _, tt := range tests {
		res, err := componentCall(t, m, tt.tool, tt.args)
		if err != nil {
			t.Errorf("%s(%s): %v", tt.tool, tt.args, err)
			continue
		}
		if res.IsError != tt.isError {
			t.Errorf("%s(%s): isError %v, want %v (%+v)", tt.tool, tt.args, res.IsError, tt.isError, res)
		}
		if len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, tt.text) {
			t.Errorf("%s(%s): content %+v, want text %q", tt.tool, tt.args, res.Content, tt.text)
		}
		if string(res.StructuredContent) != tt.structured {
			t.Errorf("%s(%s): structuredContent %s, want %s", tt.tool, tt.args, res.StructuredContent, tt.structured)
		}
	}
}

func TestComponentListTools(t *testing.T) {
	wasm := componentWasm(t, "kinds")
	m, err := testEngine.Load(context.Background(), "kinds", wasm, Limits{Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	g, ls := guestLists(t, m)
	if g.ABI() != 2 || ls.Resources != nil || ls.Templates != nil || ls.Prompts != nil || ls.Skills != nil {
		t.Errorf("ABI %d, lists %+v; want 2 and only tools", g.ABI(), ls)
	}
	var list abi.ListToolsResult
	for _, raw := range ls.Tools {
		var def abi.Tool
		if err := json.Unmarshal(raw, &def); err != nil {
			t.Fatal(err)
		}
		list.Tools = append(list.Tools, def)
	}
	byName := map[string]abi.Tool{}
	for _, tl := range list.Tools {
		byName[tl.Name] = tl
	}
	want := map[string]string{
		"add":         `{"additionalProperties":false,"properties":{"a":{"maximum":255,"minimum":0,"type":"integer"},"b":{"maximum":32767,"minimum":-32768,"type":"integer"},"c":{"maximum":4294967295,"minimum":0,"type":"integer"},"d":{"maximum":9223372036854775807,"minimum":-9223372036854775808,"type":"integer"},"e":{"maximum":18446744073709551615,"minimum":0,"type":"integer"}},"required":["a","b","c","d","e"],"type":"object"}`,
		"next-char":   `{"additionalProperties":false,"properties":{"b":{"type":"boolean"},"c":{"maxLength":1,"minLength":1,"type":"string"}},"required":["c","b"],"type":"object"}`,
		"double":      `{"additionalProperties":false,"properties":{"o":{"anyOf":[{"maximum":4294967295,"minimum":0,"type":"integer"},{"type":"null"}]}},"required":["o"],"type":"object"}`,
		"next-color":  `{"additionalProperties":false,"properties":{"c":{"enum":["red","green","blue"],"type":"string"}},"required":["c"],"type":"object"}`,
		"toggle-exec": `{"additionalProperties":false,"properties":{"p":{"items":{"enum":["read","write","exec"],"type":"string"},"type":"array","uniqueItems":true}},"required":["p"],"type":"object"}`,
	}
	for name, schema := range want {
		if got := string(byName[name].InputSchema); got != schema {
			t.Errorf("%s: inputSchema\n got %s\nwant %s", name, got, schema)
		}
	}
	if got := string(byName["divide"].OutputSchema); !strings.Contains(got, `"result":{"maximum":2147483647`) {
		t.Errorf("divide: outputSchema %s, want the ok type wrapped as result", got)
	}
	if len(list.Tools) != 19 {
		t.Errorf("%d tools, want 19 (every export)", len(list.Tools))
	}
}

func TestComponentConfinement(t *testing.T) {
	wasm := componentWasm(t, "kinds")
	mnt := t.TempDir()
	if err := os.WriteFile(filepath.Join(mnt, "note.txt"), []byte("Grüße aus der Datei"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := testEngine.Load(context.Background(), "kinds", wasm, Limits{Instances: 1, Timeout: 2 * time.Second, MemoryPages: 64,
		AllowedPaths: []Mount{{Host: mnt, Guest: "/data", ReadOnly: true}}})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	for _, tt := range []struct {
		args    string
		text    string
		isError bool
	}{
		{`{"path":"/data/note.txt"}`, "Grüße aus der Datei", false},
		{`{"path":"` + outside + `"}`, "open: " + outside, true},
		{`{"path":"/data/../` + filepath.Base(filepath.Dir(outside)) + `/secret.txt"}`, "open:", true},
	} {
		res, err := componentCall(t, m, "read-file", tt.args)
		if err != nil || res.IsError != tt.isError || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, tt.text) {
			t.Errorf("read-file(%s) = %+v, %v; want isError %v and %q", tt.args, res, err, tt.isError, tt.text)
		}
	}

	res, err := componentCall(t, m, "entropy", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Result []json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(res.StructuredContent, &got); err != nil || len(got.Result) != 2 {
		t.Fatalf("entropy: %s: %v", res.StructuredContent, err)
	}
	var secs int64
	var bytes []int
	json.Unmarshal(got.Result[0], &secs)
	json.Unmarshal(got.Result[1], &bytes)
	if now := time.Now().Unix(); secs < now-60 || secs > now+60 {
		t.Errorf("entropy: wall clock %d, now is %d", secs, now)
	}
	if len(bytes) != 16 || strings.Count(string(got.Result[1]), ",0,") > 8 {
		t.Errorf("entropy: random bytes %s", got.Result[1])
	}

	// A guest asleep in wasi:io/poll wakes when its time is up, and when
	// the call's timeout ends first.
	res, err = componentCall(t, m, "nap", `{"ms":30}`)
	if err != nil || len(res.Content) != 1 {
		t.Fatalf("nap 30: %+v, %v", res, err)
	}
	if ms, _ := strconv.Atoi(res.Content[0].Text); ms < 30 || ms > 1500 {
		t.Errorf("nap 30 slept %s ms", res.Content[0].Text)
	}
	start := time.Now()
	_, err = componentCall(t, m, "nap", `{"ms":600000}`)
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != KindTimeout || time.Since(start) > 30*time.Second {
		t.Errorf("nap 600000 with a 2 s timeout: %v after %v; want a timeout after about 2 s", err, time.Since(start))
	}

	for _, tt := range []struct {
		tool string
		kind Kind
	}{
		{"crash", KindTrap},
		{"spin", KindTimeout},
		{"hog", KindOutOfMemory},
	} {
		_, err := componentCall(t, m, tt.tool, `{}`)
		var ce *CallError
		if !errors.As(err, &ce) || ce.Kind != tt.kind {
			t.Errorf("%s: %v, want a %s", tt.tool, err, tt.kind)
		}
		// The instance was thrown away; the next call gets a fresh one.
		if res, err := componentCall(t, m, "greet", `{"name":"again"}`); err != nil || res.Content[0].Text != "¡hola, again!" {
			t.Errorf("after %s: greet = %+v, %v", tt.tool, res, err)
		}
	}
}

// BenchmarkComponentCall is one tool call through the canonical ABI: a
// string in, a string out, on the C component.
func BenchmarkComponentCall(b *testing.B) {
	dir := os.Getenv("MCPHOST_COMPONENTS")
	wasm, err := os.ReadFile(filepath.Join(dir, "kinds.wasm"))
	if err != nil {
		b.Skipf("skipping: %v; run scripts/components.sh", err)
	}
	m, err := testEngine.Load(context.Background(), "kinds", wasm, Limits{Instances: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close(context.Background())
	g, err := NewGuest(m, "kinds")
	if err != nil {
		b.Fatal(err)
	}
	ref, args := toolRef(b, g, "greet"), json.RawMessage(`{"name":"wörld"}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := g.CallTool(context.Background(), ref, args, abi.Context{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkComponentVsExtismC calls the kinds component's greet and the
// same tool written as an Extism C plugin (greet-extism.c), in one run.
// Each of nine rounds makes b.N calls on each side, alternating in blocks
// of 50 calls (which side starts alternates by round), so both sides see
// the same load; each figure is the median over the rounds, so a burst of
// load on a shared machine moves one round, not the figure. ns/op, B/op
// and allocs/op count the 18 calls of an op (nine rounds, two sides).
func BenchmarkComponentVsExtismC(b *testing.B) {
	dir := componentDir()
	comp, err1 := os.ReadFile(filepath.Join(dir, "kinds.wasm"))
	peer, err2 := os.ReadFile(filepath.Join(dir, "greet-extism.wasm"))
	if err := errors.Join(err1, err2); err != nil {
		b.Skipf("skipping: %v; run scripts/components.sh", err)
	}
	ctx := context.Background()
	mc, err := testEngine.Load(ctx, "kinds", comp, Limits{Instances: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer mc.Close(ctx)
	me, err := testEngine.Load(ctx, "greet", peer, Limits{Instances: 1})
	if err != nil {
		b.Fatal(err)
	}
	defer me.Close(ctx)
	gc, err1 := NewGuest(mc, "kinds")
	ge, err2 := NewGuest(me, "greet")
	if err := errors.Join(err1, err2); err != nil {
		b.Fatal(err)
	}
	args := json.RawMessage(`{"name":"wörld"}`)
	refs := [2]ToolRef{toolRef(b, gc, "greet"), toolRef(b, ge, "greet")}
	oc, _ := gc.CallTool(ctx, refs[0], args, abi.Context{})
	oe, _ := ge.CallTool(ctx, refs[1], args, abi.Context{})
	var rc, re abi.CallToolResult
	json.Unmarshal(oc.JSON, &rc)
	json.Unmarshal(oe.JSON, &re)
	if len(rc.Content) != 1 || len(re.Content) != 1 || rc.Content[0].Text != re.Content[0].Text {
		b.Fatalf("the two do not do the same work: %s vs %s", oc.JSON, oe.JSON)
	}
	sides := [2]Guest{gc, ge}
	const rounds, block = 9, 50
	var perCall [2][]float64 // ns per call, by side and round
	ratios := make([]float64, rounds)
	b.ReportAllocs()
	b.ResetTimer()
	for r := range rounds {
		var spent [2]time.Duration
		for done := 0; done < b.N; done += block {
			n := min(block, b.N-done)
			for k := range 2 {
				side := (r + k) % 2
				start := time.Now()
				for range n {
					if _, err := sides[side].CallTool(ctx, refs[side], args, abi.Context{}); err != nil {
						b.Fatal(err)
					}
				}
				spent[side] += time.Since(start)
			}
		}
		for side := range 2 {
			perCall[side] = append(perCall[side], float64(spent[side].Nanoseconds())/float64(b.N))
		}
		ratios[r] = perCall[0][r] / perCall[1][r]
	}
	b.StopTimer()
	b.ReportMetric(benchstat.Median(perCall[0]), "component-ns/call")
	b.ReportMetric(benchstat.Median(perCall[1]), "extism-c-ns/call")
	b.ReportMetric(benchstat.Median(ratios), "component/extism")
}

// TestComponentHostile calls a component whose core code breaks the
// canonical ABI (testdata/wat/hostile.wat): each call is a trap, the
// host reads nothing out of bounds, and the next call works on a fresh
// instance.
func TestComponentHostile(t *testing.T) {
	wasm := componentWasm(t, "hostile")
	m, err := testEngine.Load(context.Background(), "hostile", wasm, Limits{Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	for _, tt := range []struct{ tool, args, detail string }{
		{"bad-string", `{}`, "out of bounds"},
		{"bad-utf8", `{}`, "not valid UTF-8"},
		{"bad-char", `{}`, "not a Unicode scalar value"},
		{"bad-enum", `{}`, "discriminant 7"},
		{"unaligned", `{}`, "not aligned"},
		{"take", `{"s":"hello"}`, "out of bounds"},
	} {
		_, err := componentCall(t, m, tt.tool, tt.args)
		var ce *CallError
		if !errors.As(err, &ce) || ce.Kind != KindTrap || !strings.Contains(ce.Detail, tt.detail) {
			t.Errorf("%s: %v; want a trap saying %q", tt.tool, err, tt.detail)
		}
	}
	if st := m.Stats(); st.Discarded != 6 {
		t.Errorf("%d instances discarded, want 6 (one per trap)", st.Discarded)
	}
}

// TestComponentPollFallback loads a component the loop poll cannot
// rewrite (testdata/wat/memless.wat): the log says why, and its endless
// loop still ends with the call's timeout, under close-on-done.
func TestComponentPollFallback(t *testing.T) {
	wasm := componentWasm(t, "memless")
	m, err := testEngine.Load(context.Background(), "memless", wasm, Limits{Instances: 1, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	if !testLogs.Contains("loop poll unavailable: timeouts use wazero's close-on-done, which costs a goroutine per core call") {
		t.Error("no log line says the component runs without the loop poll")
	}
	_, err = componentCall(t, m, "spin", `{}`)
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != KindTimeout {
		t.Errorf("spin: %v; want a timeout", err)
	}
}

// TestComponentResources runs a component's own resource
// (testdata/wat/counter.wat): resource.new gives a handle, resource.rep
// reads the rep back, resource.drop runs the destructor; a dropped handle
// is dead.
func TestComponentResources(t *testing.T) {
	wasm := componentWasm(t, "counter")
	m, err := testEngine.Load(context.Background(), "counter", wasm, Limits{Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	for i, want := range []string{"42001", "42002"} {
		res, err := componentCall(t, m, "roundtrip", `{"x":42}`)
		if err != nil || len(res.Content) != 1 || res.Content[0].Text != want {
			t.Errorf("roundtrip %d: %+v, %v; want %s (rep 42, drops so far)", i, res, err, want)
		}
	}
	_, err = componentCall(t, m, "use-after-drop", `{}`)
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != KindTrap || !strings.Contains(ce.Detail, "not live") {
		t.Errorf("use-after-drop: %v; want a trap: handle is not live", err)
	}
}

// TestComponentNested runs components inside a component
// (testdata/wat/nested.wat): a child instantiated twice keeps two
// states, a child calls into another through a lifted function lowered
// again, and a string crosses from one child's memory into another's.
func TestComponentNested(t *testing.T) {
	wasm := componentWasm(t, "nested")
	m, err := testEngine.Load(context.Background(), "nested", wasm, Limits{Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	for _, tt := range []struct{ tool, args, want string }{
		{"bump-a", `{}`, "1"},
		{"bump-a", `{}`, "2"},
		{"bump-b", `{}`, "1"},
		{"twice", `{}`, "7"}, // $a's bump, twice: 3 + 4
		{"bump-a", `{}`, "5"},
		{"relay", `{"s":"grüß dich"}`, "grüß dich"},
	} {
		res, err := componentCall(t, m, tt.tool, tt.args)
		if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].Text != tt.want {
			t.Errorf("%s(%s): %+v, %v; want %q", tt.tool, tt.args, res, err, tt.want)
		}
	}
}

// TestComponentWrongImportTypes calls WASI imports a component declares
// with types other than WASI's (testdata/wat/wrongtypes.wat): each call
// is a trap that says so in words, with nothing of Go's in it.
func TestComponentWrongImportTypes(t *testing.T) {
	wasm := componentWasm(t, "wrongtypes")
	m, err := testEngine.Load(context.Background(), "wrongtypes", wasm, Limits{Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	for _, tt := range []struct{ tool, detail string }{
		{"exit-u32", "wasi:cli/exit#exit: the component declares this import with a type other than the one this host implements"},
		{"env-u32", "wasi:cli/environment#get-environment: the component declares this import with a type other than"},
	} {
		_, err := componentCall(t, m, tt.tool, `{}`)
		var ce *CallError
		if !errors.As(err, &ce) || ce.Kind != KindTrap || !strings.Contains(ce.Detail, tt.detail) {
			t.Errorf("%s: %v; want a trap saying %q", tt.tool, err, tt.detail)
		}
		for _, internal := range []string{"interface conversion", "component.", "goroutine", ".go:"} {
			if err != nil && strings.Contains(err.Error(), internal) {
				t.Errorf("%s: the error shows Go's internals (%q): %v", tt.tool, internal, err)
			}
		}
	}
}

// TestComponentUnprovidedImports: a component importing an interface
// this host does not implement at all (testdata/wat/vendor.wat) loads,
// its tools work, and the import is reported for validate; one whose
// imports are all served reports none.
func TestComponentUnprovidedImports(t *testing.T) {
	for _, tt := range []struct {
		name string
		want []string
	}{
		{"vendor", []string{"acme:telemetry/log#log"}},
		{"kinds", nil},
	} {
		m, err := testEngine.Load(context.Background(), tt.name, componentWasm(t, tt.name), Limits{Instances: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got := m.UnprovidedImports(); !slices.Equal(got, tt.want) {
			t.Errorf("%s: unprovided imports %q, want %q", tt.name, got, tt.want)
		}
		m.Close(context.Background())
	}
	if !testLogs.Contains("component imports interfaces this host does not provide; a call that reaches one traps") {
		t.Error("no warning names the unprovided import when vendor loads")
	}
}

// TestComponentReenter calls a component that reaches its own export
// again through the host (testdata/wat/reenter.wat): the recursion ends
// in a trap at the nesting bound, not in the host's stack, and the next
// call gets a fresh instance that traps the same way.
func TestComponentReenter(t *testing.T) {
	wasm := componentWasm(t, "reenter")
	m, err := testEngine.Load(context.Background(), "reenter", wasm, Limits{Instances: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close(context.Background())
	for i := range 2 {
		_, err := componentCall(t, m, "f", `{}`)
		var ce *CallError
		if !errors.As(err, &ce) || ce.Kind != KindTrap || !strings.Contains(ce.Detail, "nest more than 100 deep") {
			t.Errorf("call %d: %v; want a trap at the nesting bound", i, err)
		}
	}
}

// TestComponentStartBounded loads components whose core start function
// loops forever (testdata/wat/startspin*.wat): with the loop poll and
// under close-on-done (no memory), the load fails within the plugin's
// timeout with a message naming it, instead of hanging.
func TestComponentStartBounded(t *testing.T) {
	for _, name := range []string{"startspin", "startspin-memless"} {
		t.Run(name, func(t *testing.T) {
			wasm := componentWasm(t, name)
			m, err := testEngine.Load(context.Background(), name, wasm, Limits{Instances: 1, Timeout: 200 * time.Millisecond})
			if err == nil {
				m.Close(context.Background())
				t.Fatal("Load succeeded; want the start function stopped")
			}
			if want := "start function did not return within the plugin's timeout (200ms"; !strings.Contains(err.Error(), want) {
				t.Errorf("Load: got %v; want it to contain %q", err, want)
			}
		})
	}
}
