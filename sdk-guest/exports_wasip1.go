//go:build wasip1

package guest

import "github.com/mcphost/mcphost/abi"

// The exports of the v2 ABI. Each takes its input from the Extism kernel,
// runs Dispatch, and sets the output (return 0) or the error (return 1).

//go:wasmexport list_tools
func exportListTools() int32 { return run(abi.ExportListTools) }

//go:wasmexport call_tool
func exportCallTool() int32 { return run(abi.ExportCallTool) }

//go:wasmexport list_resources
func exportListResources() int32 { return run(abi.ExportListResources) }

//go:wasmexport list_resource_templates
func exportListResourceTemplates() int32 { return run(abi.ExportListResourceTemplates) }

//go:wasmexport read_resource
func exportReadResource() int32 { return run(abi.ExportReadResource) }

//go:wasmexport list_prompts
func exportListPrompts() int32 { return run(abi.ExportListPrompts) }

//go:wasmexport get_prompt
func exportGetPrompt() int32 { return run(abi.ExportGetPrompt) }

//go:wasmexport complete
func exportComplete() int32 { return run(abi.ExportComplete) }

//go:wasmexport on_roots_list_changed
func exportOnRootsListChanged() int32 { return run(abi.ExportOnRootsListChanged) }

// exportCallToolFrame is mcphost's third door to call_tool (ABI version
// 3): the call as an abi.CallFrame with its arguments' members indexed,
// no envelope to scan.
//
//go:wasmexport mcphost_call_tool_members
func exportCallToolFrame() int32 { return runFrame() }

// exportListSkills is mcphost's addition: the files AddSkills registered.
//
//go:wasmexport mcphost_list_skills
func exportListSkills() int32 { return run(abi.ExportListSkills) }

// exportABIVersion is mcphost's addition: a plain export (no Extism
// input or output) returning abi.Version.
//
//go:wasmexport mcphost_abi_version
func exportABIVersion() int32 { return abi.Version }
