package kits

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	tskit "github.com/mcphost/mcphost/sdk-guest/ts"
)

// TestKitTSKeyValue builds the TypeScript kit's template with a world that
// imports wasi:keyvalue/store and atomics (0.2.0-draft, their WIT in
// wit/deps/) and serves it on two replicas sharing one Redis, with the Go
// SDK client: count counts 1…N across both through atomics.increment, and
// echo gives a non-ASCII text back through bucket.set and get.
func TestKitTSKeyValue(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a TypeScript component and runs mcphost serve")
	}
	dir, write := tsKitProject(t, "kts", "wasi-keyvalue/store.wit")
	write("wit/world.wit", `package local:plugin;

world plugin {
  import wasi:keyvalue/store@0.2.0-draft;
  import wasi:keyvalue/atomics@0.2.0-draft;

  /// Adds one to the counter and returns it.
  export count: func() -> result<string, string>;

  /// Stores text, then reads it back.
  export echo: func(text: string) -> result<string, string>;
}
`)
	write("src/index.ts", `import type * as World from "local:plugin/plugin";
import { open } from "wasi:keyvalue/store@0.2.0-draft";
import { increment } from "wasi:keyvalue/atomics@0.2.0-draft";

// A store error (no-such-store, access-denied, other with the store's
// message) becomes the tool's error.
function kv<T>(f: () => T): T {
  try {
    return f();
  } catch (e: any) {
    const p = e?.payload;
    throw p?.tag === "other" ? "kv: " + p.val : "kv: " + (p?.tag ?? String(e));
  }
}

export function count(): string {
  return kv(() => increment(open("default"), "count", BigInt(1)).toString());
}

export function echo(text: string): string {
  return kv(() => {
    const b = open("default");
    b.set("echo", new TextEncoder().encode(text));
    const v = b.get("echo");
    if (v === undefined) throw "echo: not found after set";
    return new TextDecoder().decode(v);
  });
}

({ count, echo }) satisfies typeof World;
`)
	env := append(os.Environ(), "npm_config_offline=true", "HTTPS_PROXY=http://127.0.0.1:9", "HTTP_PROXY=http://127.0.0.1:9")
	build := exec.Command(tskit.BuildCommand()[0], tskit.BuildCommand()[1:]...)
	build.Dir, build.Env = dir, env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	checkKVReplicas(t, "kts", filepath.Join(dir, "kts.wasm"))
}
