;; Components inside a component, as composition tools (wac, jco's
;; composition, componentize-qjs) write them:
;; - $counter, with its own core module and state, instantiated twice:
;;   each instance counts on its own;
;; - $adder imports a function and is given $a's bump: a call from one
;;   component into another (a lifted function lowered again);
;; - $echo and $relay pass a string across that boundary, each with its
;;   own memory and realloc.
;; Calls: bump-a → 1, bump-a → 2, bump-b → 1, twice → 3 + 4 = 7,
;; relay("grüß dich") → "grüß dich".
(component
  (component $counter
    (core module $m
      (global $n (mut i32) (i32.const 0))
      (func (export "bump") (result i32)
        (global.set $n (i32.add (global.get $n) (i32.const 1)))
        (global.get $n)))
    (core instance $i (instantiate $m))
    (func (export "bump") (result u32) (canon lift (core func $i "bump"))))

  (component $adder
    (import "bump" (func $bump (result u32)))
    (core func $b (canon lower (func $bump)))
    (core module $m
      (import "x" "bump" (func $bump (result i32)))
      (func (export "twice") (result i32) (i32.add (call $bump) (call $bump))))
    (core instance $i (instantiate $m (with "x" (instance (export "bump" (func $b))))))
    (func (export "twice") (result u32) (canon lift (core func $i "twice"))))

  (component $echo
    (core module $m
      (memory (export "mem") 1)
      (global $heap (mut i32) (i32.const 1024))
      (func (export "realloc") (param i32 i32 i32 i32) (result i32)
        (local $p i32)
        (local.set $p (global.get $heap))
        (global.set $heap (i32.add (global.get $heap) (local.get 3)))
        (local.get $p))
      (func (export "echo") (param $p i32) (param $n i32) (result i32)
        (i32.store (i32.const 16) (local.get $p))
        (i32.store (i32.const 20) (local.get $n))
        (i32.const 16)))
    (core instance $i (instantiate $m))
    (alias core export $i "mem" (core memory $mem))
    (alias core export $i "realloc" (core func $realloc))
    (func (export "echo") (param "s" string) (result string)
      (canon lift (core func $i "echo") (memory $mem) (realloc $realloc) string-encoding=utf8)))

  (component $relay
    (import "echo" (func $echo (param "s" string) (result string)))
    (core module $libc
      (memory (export "mem") 1)
      (global $heap (mut i32) (i32.const 1024))
      (func (export "realloc") (param i32 i32 i32 i32) (result i32)
        (local $p i32)
        (local.set $p (global.get $heap))
        (global.set $heap (i32.add (global.get $heap) (local.get 3)))
        (local.get $p)))
    (core instance $libc (instantiate $libc))
    (alias core export $libc "mem" (core memory $mem))
    (alias core export $libc "realloc" (core func $realloc))
    (core func $e (canon lower (func $echo) (memory $mem) (realloc $realloc) string-encoding=utf8))
    (core module $m
      (import "x" "echo" (func $echo (param i32 i32 i32)))
      (func (export "relay") (param $p i32) (param $n i32) (result i32)
        (call $echo (local.get $p) (local.get $n) (i32.const 32))
        (i32.const 32)))
    (core instance $i (instantiate $m (with "x" (instance (export "echo" (func $e))))))
    (func (export "relay") (param "s" string) (result string)
      (canon lift (core func $i "relay") (memory $mem) (realloc $realloc) string-encoding=utf8)))

  (instance $a (instantiate $counter))
  (instance $b (instantiate $counter))
  (instance $t (instantiate $adder (with "bump" (func $a "bump"))))
  (instance $e (instantiate $echo))
  (instance $r (instantiate $relay (with "echo" (func $e "echo"))))
  (export "bump-a" (func $a "bump"))
  (export "bump-b" (func $b "bump"))
  (export "twice" (func $t "twice"))
  (export "relay" (func $r "relay"))
)
