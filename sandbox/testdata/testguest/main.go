//go:build wasip1

// Command testguest is the Wasm module the sandbox tests run: one export per
// behaviour under test. It talks to the Extism kernel directly through
// //go:wasmimport (internal/pdk) instead of a guest SDK.
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

	"github.com/mcphost/mcphost/internal/pdk"
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
	pdk.Output(pdk.Input())
	return 0
}

//go:wasmexport fail
func fail() int32 {
	return pdk.Fail("guest says no: " + string(pdk.Input()))
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
func entered() { pdk.NotifyProgress(pdk.Store([]byte(`{"progress":0,"message":"entered"}`))) }

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
	pdk.Output([]byte("bye"))
	os.Exit(0)
	return 0
}

//go:wasmexport big
func big() int32 {
	n, err := strconv.Atoi(string(pdk.Input()))
	if err != nil {
		return pdk.Fail(err.Error())
	}
	pdk.Output([]byte(strings.Repeat("x", n)))
	return 0
}

//go:wasmexport print
func printOut() int32 {
	in := string(pdk.Input())
	fmt.Println("stdout:" + in)
	fmt.Fprintln(os.Stderr, "stderr:"+in)
	pdk.Output([]byte("ok"))
	return 0
}

//go:wasmexport log
func log() int32 {
	pdk.LogInfo(pdk.Store(pdk.Input()))
	return 0
}

//go:wasmexport env
func env() int32 {
	pdk.Output([]byte(strings.Join(os.Environ(), "\n")))
	return 0
}

//go:wasmexport config
func config() int32 {
	v, ok := pdk.Config(string(pdk.Input()))
	if !ok {
		return pdk.Fail("no such config key")
	}
	pdk.Output([]byte(v))
	return 0
}

//go:wasmexport read
func read() int32 {
	b, err := os.ReadFile(string(pdk.Input()))
	if err != nil {
		return pdk.Fail(err.Error())
	}
	pdk.Output(b)
	return 0
}

//go:wasmexport write
func write() int32 {
	if err := os.WriteFile(string(pdk.Input()), []byte("written by guest"), 0o644); err != nil {
		return pdk.Fail(err.Error())
	}
	pdk.Output([]byte("ok"))
	return 0
}

// kept is the file keep opened, which stays open across calls.
var kept *os.File

//go:wasmexport keep
func keep() int32 {
	f, err := os.OpenFile(string(pdk.Input()), os.O_RDWR, 0)
	if err != nil {
		return pdk.Fail(err.Error())
	}
	kept = f
	return readKept()
}

//go:wasmexport readkept
func readKept() int32 {
	b := make([]byte, 64)
	n, err := kept.ReadAt(b, 0)
	if n == 0 && err != nil {
		return pdk.Fail(err.Error())
	}
	pdk.Output(b[:n])
	return 0
}

//go:wasmexport writekept
func writeKept() int32 {
	if _, err := kept.WriteAt(pdk.Input(), 0); err != nil {
		return pdk.Fail(err.Error())
	}
	pdk.Output([]byte("ok"))
	return 0
}

//go:wasmexport http
func httpGet() int32 {
	req, _ := json.Marshal(map[string]string{"url": string(pdk.Input()), "method": "GET"})
	off := pdk.HTTPRequest(pdk.Store(req), 0)
	body := pdk.Load(off)
	pdk.Output([]byte(fmt.Sprintf("%d %s", pdk.HTTPStatusCode(), body)))
	return 0
}

//go:wasmexport clock
func clock() int32 {
	var r [16]byte
	rand.Read(r[:])
	out, _ := json.Marshal(map[string]any{"year": time.Now().Year(), "rand": hex.EncodeToString(r[:])})
	pdk.Output(out)
	return 0
}

var count int

//go:wasmexport count
func counter() int32 {
	count++
	pdk.Output([]byte(strconv.Itoa(count)))
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
	if err := json.Unmarshal(pdk.Input(), &in); err != nil {
		return pdk.Fail(err.Error())
	}
	var p uint64
	if len(in.Payload) > 0 {
		p = pdk.Store(in.Payload)
	}
	if in.Raw != "" {
		p = pdk.Store([]byte(in.Raw))
	}
	var reply uint64
	switch in.Fn {
	case "notify_logging_message":
		pdk.NotifyLoggingMessage(p)
	case "notify_progress":
		pdk.NotifyProgress(p)
	case "create_message":
		reply = pdk.CreateMessage(p)
	case "create_elicitation":
		reply = pdk.CreateElicitation(p)
	case "list_roots":
		reply = pdk.ListRoots()
	case "notify_tool_list_changed":
		pdk.NotifyToolListChanged()
	case "notify_prompt_list_changed":
		pdk.NotifyPromptListChanged()
	case "notify_resource_list_changed":
		pdk.NotifyResourceListChanged()
	case "notify_resource_updated":
		pdk.NotifyResourceUpdated(p)
	case "notify_url_elicitation_completed":
		pdk.NotifyURLElicitationCompleted(p)
	case "get_keyring_secret":
		reply = pdk.GetKeyringSecret(p)
	case "kv":
		reply = pdk.KV(p)
	case "http":
		reply = pdk.HostHTTP(p)
	default:
		return pdk.Fail("unknown host function " + in.Fn)
	}
	pdk.Output(pdk.Load(reply))
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
	n := pdk.InputLength()
	in := pdk.InputOffset()
	add("input_length", n)
	add("input_offset!=0", in != 0)
	add("length(input)", pdk.Length(in))
	add("length_unsafe(input)", pdk.LengthUnsafe(in))
	add("length(0)", pdk.Length(0))
	add("input_load_u8(len)", pdk.InputLoadU8(n))
	// Not input_load_u64 past the input: go-sdk reads kernel memory there.
	add("alloc(0)", pdk.Alloc(0))
	a := pdk.Alloc(10)
	add("length(a)", pdk.Length(a))
	add("length(a+1)", pdk.Length(a+1))
	add("load_u8(a) zeroed", pdk.LoadU8(a))
	pdk.StoreU8(a, 200)
	pdk.StoreU64(a+1, 0x0102030405060708)
	add("load_u8(a)", pdk.LoadU8(a))
	add("load_u64(a+1)", pdk.LoadU64(a+1))
	pdk.Free(a)
	add("length(freed)", pdk.Length(a))
	b := pdk.Alloc(10)
	add("alloc after free reuses", b == a)
	if n > 0 {
		pdk.Free(in)
		add("input_length after free(input)", pdk.InputLength())
	}
	add("error_get", pdk.ErrorGet())
	pdk.OutputSet(b, 0)
	add("output_length", pdk.OutputLength())
	pdk.Output([]byte(strings.Join(r, "\n")))
	return 0
}

// vars appends the input to the var "v" and outputs it; "full" tries to
// store more than the kernel allows.
//
//go:wasmexport vars
func vars() int32 {
	name := pdk.Store([]byte("v"))
	in := pdk.Input()
	if string(in) == "full" {
		pdk.VarSet(pdk.Store([]byte("big")), pdk.Store(make([]byte, 2<<20)))
		return 0
	}
	var old []byte
	if off := pdk.VarGet(name); off != 0 {
		old = pdk.Load(off)
	}
	pdk.VarSet(pdk.Store([]byte("v")), pdk.Store(append(old, in...)))
	pdk.Output(pdk.Load(pdk.VarGet(pdk.Store([]byte("v")))))
	return 0
}
