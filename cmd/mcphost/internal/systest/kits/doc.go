// Package kits holds the system tests of the language kits (Go, C,
// AssemblyScript, TypeScript): each template scaffolded, built and served,
// key-value across replicas, components, and the author loop.
package kits
