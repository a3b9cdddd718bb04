// Command hashtools is an mcphost plugin with everyday encoding utilities:
// hashes (md5, sha1, sha256, sha512), base64 and hex encoding, random
// UUIDs and a safe calculator. Everything runs inside the sandbox; nothing
// touches the network or the filesystem.
package main
