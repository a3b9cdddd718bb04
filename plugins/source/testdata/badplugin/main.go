// Command badplugin does not compile: the plugins tests check that the
// compiler's message reaches the error.
package main

func main() {
	undefinedFunction()
}
