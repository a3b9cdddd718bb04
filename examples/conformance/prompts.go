package main

import (
	"fmt"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
)

func registerPrompts() {
	guest.AddPrompt(abi.Prompt{Name: "test_simple_prompt", Title: "Simple Test Prompt", Description: "A simple prompt without arguments"},
		func(*guest.Context, map[string]string) (*abi.GetPromptResult, error) {
			return &abi.GetPromptResult{Messages: []abi.PromptMessage{
				guest.UserMessage(text("This is a simple prompt for testing.")),
			}}, nil
		})
	guest.AddPrompt(abi.Prompt{Name: "test_prompt_with_arguments", Title: "Prompt With Arguments",
		Description: "A prompt with required arguments",
		Arguments: []abi.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		}},
		func(_ *guest.Context, args map[string]string) (*abi.GetPromptResult, error) {
			return &abi.GetPromptResult{Messages: []abi.PromptMessage{
				guest.UserMessage(text(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"]))),
			}}, nil
		})
	guest.AddPrompt(abi.Prompt{Name: "test_prompt_with_embedded_resource", Title: "Prompt With Embedded Resource",
		Description: "A prompt that includes an embedded resource",
		Arguments:   []abi.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(_ *guest.Context, args map[string]string) (*abi.GetPromptResult, error) {
			return &abi.GetPromptResult{Messages: []abi.PromptMessage{
				guest.UserMessage(guest.EmbeddedText(args["resourceUri"], "text/plain", "Embedded resource content for testing.")),
				guest.UserMessage(text("Please process the embedded resource above.")),
			}}, nil
		})
	guest.AddPrompt(abi.Prompt{Name: "test_prompt_with_image", Title: "Prompt With Image", Description: "A prompt that includes image content"},
		func(*guest.Context, map[string]string) (*abi.GetPromptResult, error) {
			return &abi.GetPromptResult{Messages: []abi.PromptMessage{
				guest.UserMessage(guest.ImageBase64(pngBase64, "image/png")),
				guest.UserMessage(text("Please analyze the image above.")),
			}}, nil
		})

	for arg, values := range map[string][]string{
		"arg1": {"testValue1", "test", "example"},
		"arg2": {"testValue2", "test", "example"},
	} {
		guest.CompletePromptArg("test_prompt_with_arguments", arg,
			func(_ *guest.Context, value string, _ map[string]string) ([]string, error) {
				return guest.FilterPrefix(values, value), nil
			})
	}
}
