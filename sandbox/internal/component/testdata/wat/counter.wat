;; A component with a resource of its own: resource.new, resource.rep and
;; resource.drop as canonical built-ins, and a destructor that counts the
;; drops. roundtrip(x) makes a handle for rep x, reads the rep back, drops
;; the handle and returns rep * 1000 + drops.
(component
  (core module $dtor
    (global $drops (export "drops") (mut i32) (i32.const 0))
    (func (export "dtor") (param i32)
      (global.set $drops (i32.add (global.get $drops) (i32.const 1)))))
  (core instance $d (instantiate $dtor))
  (type $thing (resource (rep i32) (dtor (core func $d "dtor"))))
  (core func $new (canon resource.new $thing))
  (core func $rep (canon resource.rep $thing))
  (core func $drop (canon resource.drop $thing))
  (core module $m
    (import "r" "new" (func $new (param i32) (result i32)))
    (import "r" "rep" (func $rep (param i32) (result i32)))
    (import "r" "drop" (func $drop (param i32)))
    (import "d" "drops" (global $drops (mut i32)))
    (func (export "roundtrip") (param $x i32) (result i32)
      (local $h i32) (local $r i32)
      (local.set $h (call $new (local.get $x)))
      (local.set $r (call $rep (local.get $h)))
      (call $drop (local.get $h))
      (i32.add (i32.mul (local.get $r) (i32.const 1000)) (global.get $drops)))
    (func (export "use-after-drop") (result i32)
      (local $h i32)
      (local.set $h (call $new (i32.const 5)))
      (call $drop (local.get $h))
      (call $rep (local.get $h))))
  (core instance $i (instantiate $m
    (with "r" (instance (export "new" (func $new)) (export "rep" (func $rep)) (export "drop" (func $drop))))
    (with "d" (instance $d))))
  (func (export "roundtrip") (param "x" u32) (result u32) (canon lift (core func $i "roundtrip")))
  (func (export "use-after-drop") (result u32) (canon lift (core func $i "use-after-drop")))
)
