package main

import (
	"embed"
	"io/fs"

	guest "github.com/mcphost/mcphost/sdk-guest"
)

// skillFiles are the plugin's skills (SEP-2640): each directory of
// skills/ holding a SKILL.md. mcphost serves them at
// skill://conformance/<name>/SKILL.md and computes their digests.
//
//go:embed skills
var skillFiles embed.FS

func registerSkills() {
	sub, err := fs.Sub(skillFiles, "skills")
	if err != nil {
		panic(err) // "skills" is embedded
	}
	guest.AddSkills(sub)
}
