//go:build wasip1

// Command testguest is the Wasm module the sandbox tests run: one export per
// behaviour under test. It talks to the Extism kernel directly through
// //go:wasmimport (pdk.go) instead of a guest SDK.
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o testguest.wasm .
package main

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {}

//go:wasmexport mcphost_abi_version
func abiVersion() int32 { return 1 }

// add is a plain Wasm function, not an Extism one.
//
//go:wasmexport add
func add(a, b int32) int32 { return a + b }

//go:wasmexport echo
func echo() int32 {
	output(input())
	return 0
}

//go:wasmexport fail
func fail() int32 {
	setError("guest says no: " + string(input()))
	return 1
}

//go:wasmexport rc7
func rc7() int32 { return 7 }

var sink *int

//go:wasmexport nilderef
func nilderef() int32 {
	*sink = 1 // nil pointer dereference: Go panics, then aborts with unreachable
	return 0
}

//go:wasmexport loop
func loop() int32 {
	entered()
	n := 0
	for {
		n++
	}
}

//go:wasmexport sleep
func sleep() int32 {
	entered()
	time.Sleep(time.Hour)
	return 0
}

// entered tells the host that the call is running, through a notification
// a test's Peer can wait for.
func entered() { hostProgress(store([]byte(`{"progress":0,"message":"entered"}`))) }

var hoard [][]byte

//go:wasmexport oom
func oom() int32 {
	for {
		b := make([]byte, 1<<20)
		for i := range b {
			b[i] = byte(i)
		}
		hoard = append(hoard, b)
	}
}

//go:wasmexport exit3
func exit3() int32 {
	os.Exit(3)
	return 0
}

//go:wasmexport exit0
func exit0() int32 {
	output([]byte("bye"))
	os.Exit(0)
	return 0
}

//go:wasmexport big
func big() int32 {
	n, err := strconv.Atoi(string(input()))
	if err != nil {
		setError(err.Error())
		return 1
	}
	output([]byte(strings.Repeat("x", n)))
	return 0
}

//go:wasmexport print
func printOut() int32 {
	in := string(input())
	fmt.Println("stdout:" + in)
	fmt.Fprintln(os.Stderr, "stderr:"+in)
	output([]byte("ok"))
	return 0
}

//go:wasmexport log
func log() int32 {
	logInfo(store(input()))
	return 0
}

//go:wasmexport env
func env() int32 {
	output([]byte(strings.Join(os.Environ(), "\n")))
	return 0
}

//go:wasmexport config
func config() int32 {
	v, ok := configGet(string(input()))
	if !ok {
		setError("no such config key")
		return 1
	}
	output([]byte(v))
	return 0
}

//go:wasmexport read
func read() int32 {
	b, err := os.ReadFile(string(input()))
	if err != nil {
		setError(err.Error())
		return 1
	}
	output(b)
	return 0
}

//go:wasmexport write
func write() int32 {
	if err := os.WriteFile(string(input()), []byte("written by guest"), 0o644); err != nil {
		setError(err.Error())
		return 1
	}
	output([]byte("ok"))
	return 0
}

// kept is the file keep opened, which stays open across calls.
var kept *os.File

//go:wasmexport keep
func keep() int32 {
	f, err := os.OpenFile(string(input()), os.O_RDWR, 0)
	if err != nil {
		setError(err.Error())
		return 1
	}
	kept = f
	return readKept()
}

//go:wasmexport readkept
func readKept() int32 {
	b := make([]byte, 64)
	n, err := kept.ReadAt(b, 0)
	if n == 0 && err != nil {
		setError(err.Error())
		return 1
	}
	output(b[:n])
	return 0
}

//go:wasmexport writekept
func writeKept() int32 {
	if _, err := kept.WriteAt(input(), 0); err != nil {
		setError(err.Error())
		return 1
	}
	output([]byte("ok"))
	return 0
}

//go:wasmexport http
func httpGet() int32 {
	req, _ := json.Marshal(map[string]string{"url": string(input()), "method": "GET"})
	off := httpRequest(store(req), 0)
	body := load(off)
	output([]byte(fmt.Sprintf("%d %s", httpStatusCode(), body)))
	return 0
}

//go:wasmexport clock
func clock() int32 {
	var r [16]byte
	rand.Read(r[:])
	out, _ := json.Marshal(map[string]any{"year": time.Now().Year(), "rand": hex.EncodeToString(r[:])})
	output(out)
	return 0
}

var count int

//go:wasmexport count
func counter() int32 {
	count++
	output([]byte(strconv.Itoa(count)))
	return 0
}

// host calls the host function named by the input {"fn":…,"payload":…} and
// outputs its reply ("" for notifications). "raw" instead of "payload"
// passes bytes that need not be JSON.
//
//go:wasmexport host
func host() int32 {
	var in struct {
		Fn      string          `json:"fn"`
		Payload json.RawMessage `json:"payload"`
		Raw     string          `json:"raw"`
	}
	if err := json.Unmarshal(input(), &in); err != nil {
		setError(err.Error())
		return 1
	}
	var p uint64
	if len(in.Payload) > 0 {
		p = store(in.Payload)
	}
	if in.Raw != "" {
		p = store([]byte(in.Raw))
	}
	var reply uint64
	switch in.Fn {
	case "notify_logging_message":
		hostLog(p)
	case "notify_progress":
		hostProgress(p)
	case "create_message":
		reply = hostCreateMessage(p)
	case "create_elicitation":
		reply = hostCreateElicitation(p)
	case "list_roots":
		reply = hostListRoots()
	case "notify_tool_list_changed":
		hostToolListChanged()
	case "notify_prompt_list_changed":
		hostPromptListChanged()
	case "notify_resource_list_changed":
		hostResourceListChanged()
	case "notify_resource_updated":
		hostResourceUpdated(p)
	case "notify_url_elicitation_completed":
		hostURLElicitationCompleted(p)
	case "get_keyring_secret":
		reply = hostKeyringSecret(p)
	case "kv":
		reply = hostKV(p)
	case "http":
		reply = hostHTTP(p)
	default:
		setError("unknown host function " + in.Fn)
		return 1
	}
	output(load(reply))
	return 0
}

// kernel probes the kernel functions and outputs what each returned, in
// terms a guest can observe (lengths, contents, zero or not; never raw
// offsets, which differ between kernels).
//
//go:wasmexport kernel
func kernelProbe() int32 {
	var r []string
	add := func(k string, v any) { r = append(r, fmt.Sprintf("%s=%v", k, v)) }
	n := inputLength()
	in := inputOffset()
	add("input_length", n)
	add("input_offset!=0", in != 0)
	add("length(input)", length(in))
	add("length_unsafe(input)", lengthUnsafe(in))
	add("length(0)", length(0))
	add("input_load_u8(len)", inputLoadU8(n))
	// Not input_load_u64 past the input: go-sdk reads kernel memory there.
	add("alloc(0)", alloc(0))
	a := alloc(10)
	add("length(a)", length(a))
	add("length(a+1)", length(a+1))
	add("load_u8(a) zeroed", loadU8(a))
	storeU8(a, 200)
	storeU64(a+1, 0x0102030405060708)
	add("load_u8(a)", loadU8(a))
	add("load_u64(a+1)", loadU64(a+1))
	free(a)
	add("length(freed)", length(a))
	b := alloc(10)
	add("alloc after free reuses", b == a)
	if n > 0 {
		free(in)
		add("input_length after free(input)", inputLength())
	}
	add("error_get", errorGet())
	outputSet(b, 0)
	add("output_length", outputLength())
	output([]byte(strings.Join(r, "\n")))
	return 0
}

// vars appends the input to the var "v" and outputs it; "full" tries to
// store more than the kernel allows.
//
//go:wasmexport vars
func vars() int32 {
	name := store([]byte("v"))
	in := input()
	if string(in) == "full" {
		varSet(store([]byte("big")), store(make([]byte, 2<<20)))
		return 0
	}
	var old []byte
	if off := varGet(name); off != 0 {
		old = load(off)
	}
	varSet(store([]byte("v")), store(append(old, in...)))
	output(load(varGet(store([]byte("v")))))
	return 0
}
