package main
import (
 _ "github.com/extism/go-sdk"
 _ "github.com/tetratelabs/wazero"
 _ "github.com/BurntSushi/toml"
 _ "github.com/fsnotify/fsnotify"
 _ "github.com/santhosh-tekuri/jsonschema/v6"
 _ "github.com/modelcontextprotocol/go-sdk/mcp"
 _ "github.com/rogpeppe/go-internal/testscript"
 _ "github.com/rogpeppe/go-internal/txtar"
)
func main(){}
