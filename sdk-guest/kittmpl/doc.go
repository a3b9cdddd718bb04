// Package kittmpl writes a guest kit's plugin template (an fs.FS) into a
// directory: the code the C, AssemblyScript and TypeScript kits share for
// `mcphost new`. It owns rendering (also of the Go kit's templates) and
// name checking, not the templates themselves, which live with each kit.
package kittmpl
