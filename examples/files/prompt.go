package main

import (
	"fmt"

	"github.com/mcphost/mcphost/abi"
	guest "github.com/mcphost/mcphost/sdk-guest"
)

func registerPrompt() {
	guest.AddPrompt(abi.Prompt{
		Name:        "summarize_file",
		Title:       "Summarize a file",
		Description: "Embeds a file from the served directory and asks for a summary of it.",
		Arguments:   []abi.PromptArgument{{Name: "path", Description: "file path relative to the served root", Required: true}},
	}, func(_ *guest.Context, args map[string]string) (*abi.GetPromptResult, error) {
		s := current()
		p, err := s.resolve(args["path"])
		if err != nil {
			return nil, err
		}
		c, err := readContents(s, p)
		if err != nil {
			return nil, err
		}
		rel := s.rel(p)
		return &abi.GetPromptResult{
			Description: "Summary of " + rel,
			Messages: []abi.PromptMessage{
				guest.UserMessage(abi.Content{Type: abi.ContentResource, Resource: &c}),
				guest.UserMessage(guest.Text(fmt.Sprintf("Please summarize the file %s above: what it is, its main points, and anything notable.", rel))),
			},
		}, nil
	})
	guest.CompletePromptArg("summarize_file", "path", func(_ *guest.Context, value string, _ map[string]string) ([]string, error) {
		s := current()
		files, err := walk(s, 0)
		if err != nil {
			return nil, err
		}
		rel := make([]string, len(files))
		for i, f := range files {
			rel[i] = s.rel(f)
		}
		return guest.FilterPrefix(rel, value), nil
	})
}
