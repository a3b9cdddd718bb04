// Package core holds mcphost's end-to-end system tests: the official Go SDK
// client over stdio and HTTP in both protocol eras, tasks, the testscript
// scripts, metrics, hostile and flooding guests, operator files out of
// reach, skills and apps files.
package core
