// Package kittmpl writes a guest kit's plugin template (an fs.FS) into a
// directory: the code the C and AssemblyScript kits share for `mcphost
// new`. It owns rendering and name checking, not the templates themselves,
// which live with each kit.
package kittmpl
