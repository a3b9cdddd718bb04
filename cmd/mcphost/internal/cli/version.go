package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version is set at link time by releases (-ldflags "-X github.com/mcphost/mcphost/cmd/mcphost/internal/cli.version=…").
var version = ""

func versionString() string {
	v := version
	if v == "" {
		v = "devel"
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
	}
	return fmt.Sprintf("mcphost %s (%s, %s/%s)", v, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
