package main

import (
	"time"

	guest "github.com/mcphost/mcphost/sdk-guest"
)

func main() {}

// Test assets of the reference server.
const (
	pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==" // 1×1 red PNG
	wavBase64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="                                     // minimal WAV
)

// pause is time.Sleep; tests replace it to check the pacing without
// waiting.
var pause = time.Sleep

func init() {
	registerTools()
	registerResources()
	registerPrompts()
	registerInputTools()
	registerTaskTools()
	registerSkills()
}

// text is guest.Text, short for the tables of this package.
var text = guest.Text
