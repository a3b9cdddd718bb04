package guest

import (
	"fmt"

	"github.com/mcphost/mcphost/abi"
)

// PromptHandler renders a prompt from its arguments. Required arguments
// (per the prompt's definition) are checked before it runs.
type PromptHandler func(ctx *Context, args map[string]string) (*abi.GetPromptResult, error)

// AddPrompt registers a prompt. Registering the same name again replaces
// it.
func AddPrompt(p abi.Prompt, h PromptHandler) {
	if p.Name == "" {
		panic("guest: prompt name is required")
	}
	std.mu.Lock()
	defer std.mu.Unlock()
	e := &promptEntry{def: p, handler: h}
	for i, old := range std.prompts {
		if old.def.Name == p.Name {
			std.prompts[i] = e
			return
		}
	}
	std.prompts = append(std.prompts, e)
}

// RemovePrompt unregisters a prompt and reports whether it existed. Call
// [NotifyPromptListChanged] afterwards to tell the client.
func RemovePrompt(name string) bool {
	std.mu.Lock()
	defer std.mu.Unlock()
	for i, e := range std.prompts {
		if e.def.Name == name {
			std.prompts = append(std.prompts[:i:i], std.prompts[i+1:]...)
			return true
		}
	}
	return false
}

// ArgCompleter suggests values for one argument. value is what the user
// typed so far; args holds the arguments already resolved. The SDK keeps
// the first 100 suggestions and reports the total.
type ArgCompleter func(ctx *Context, value string, args map[string]string) ([]string, error)

// Completer answers any completion request. It runs when no [ArgCompleter]
// matches; without one, the SDK answers known prompts and templates with
// no suggestions.
type Completer func(ctx *Context, p abi.CompleteParams) (*abi.Completion, error)

// CompletePromptArg registers suggestions for argument arg of prompt.
func CompletePromptArg(prompt, arg string, f ArgCompleter) {
	std.mu.Lock()
	defer std.mu.Unlock()
	std.completers[completerKey{"prompt", prompt, arg}] = f
}

// CompleteTemplateVar registers suggestions for variable name of the
// resource template uriTemplate (as registered).
func CompleteTemplateVar(uriTemplate, name string, f ArgCompleter) {
	std.mu.Lock()
	defer std.mu.Unlock()
	std.completers[completerKey{"resource", uriTemplate, name}] = f
}

// SetCompleter sets the fallback [Completer].
func SetCompleter(c Completer) {
	std.mu.Lock()
	defer std.mu.Unlock()
	std.completer = c
}

// OnRootsListChanged sets the function called when the client's roots
// change (the on_roots_list_changed export). Use [Context.Roots] in it to
// fetch the new list.
func OnRootsListChanged(f func(ctx *Context)) {
	std.mu.Lock()
	defer std.mu.Unlock()
	std.onRoots = f
}

func missingPromptArg(p abi.Prompt, args map[string]string) error {
	for _, a := range p.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			return fmt.Errorf("prompt %q: missing required argument %q", p.Name, a.Name)
		}
	}
	return nil
}
